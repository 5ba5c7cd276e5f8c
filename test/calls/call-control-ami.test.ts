// The call-control port on the wire: what click-to-call and transfer send over the events AMI
// connection, and how the engine's answers (captured from a real Asterisk 22 into
// fixtures/ami/call-control.json, replayed by the fake AMI server) are read.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { startCallTracking } from "../../src/api/call-tracking.js";
import { FakeAmiServer } from "../../src/engine/testing/fake-ami.js";
import { freshStore } from "../store/helpers.js";

async function withPort(
  body: (
    control: NonNullable<ReturnType<typeof startCallTracking>["control"]>,
    ami: FakeAmiServer,
  ) => Promise<void>,
) {
  const ami = new FakeAmiServer();
  const port = await ami.listen();
  const store = await freshStore();
  const tracking = startCallTracking({
    db: store.db,
    clock: () => new Date(0),
    ami: { host: "127.0.0.1", port, username: "pbxctl", secret: "secret" },
  });
  try {
    await body(tracking.control!, ami);
  } finally {
    await tracking.stop();
    await store.close();
    await ami.close();
  }
}

test("Originate: one action, every field as checked, variables comma-separated in one header", async () => {
  await withPort(async (control, ami) => {
    await control.originate({
      channel: "Local/101@org_a_internal",
      context: "org_a_outbound",
      exten: "4155550100",
      callerId: '"4155550100" <4155550100>',
      account: "aaaaaaaa-0000-4000-8000-000000000001",
      channelId: "pbx-1",
      otherChannelId: "pbx-1-2",
      timeoutMs: 30_000,
      variables: { CALLER_EXT: "101", PBX_REQUEST_CID: "+918065978001" },
    });
    const sent = ami.received.filter((a) => a.action === "Originate");
    assert.is(sent.length, 1);
    const fields = Object.fromEntries(
      Object.entries(sent[0]!.fields).map(([k, v]) => [k.toLowerCase(), v]),
    );
    assert.is(fields.channel, "Local/101@org_a_internal");
    assert.is(fields.context, "org_a_outbound");
    assert.is(fields.exten, "4155550100");
    assert.is(fields.priority, "1");
    assert.is(fields.account, "aaaaaaaa-0000-4000-8000-000000000001");
    assert.is(fields.channelid, "pbx-1");
    assert.is(fields.async, "true");
    assert.is(fields.variable, "CALLER_EXT=101,PBX_REQUEST_CID=+918065978001");
  });
});

test("a channel gone before BlindTransfer is a call not found; before Hangup, done", async () => {
  await withPort(async (control, ami) => {
    const refused = await control
      .blindTransfer("PJSIP/org_a_101-00000001", "org_a_internal", "102")
      .then(
        () => null,
        (error: Error) => error,
      );
    assert.ok(refused, "a refused transfer must not look done");
    assert.is(refused!.message, "Call not found");
    assert.is((refused as Error & { status?: number }).status, 404);
    await control.hangup("PJSIP/org_a_101-00000001");
    assert.equal(
      ami.received
        .map((a) => a.action)
        .filter((a) => !["login", "coreshowchannels"].includes(a.toLowerCase())),
      ["BlindTransfer", "Hangup"],
    );
  });
});

test.run();
