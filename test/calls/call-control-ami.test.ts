// The call-control port on the wire: what click-to-call and transfer send over the events AMI
// connection, and how the engine's answers (captured from a real Asterisk 22 into
// fixtures/ami/call-control.json, replayed by the fake AMI server) are read.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { startCallTracking } from "../../src/api/call-tracking.js";
import { holdCall, unholdCall } from "../../src/domain/calls/call-control.js";
import type { LiveCall } from "../../src/domain/calls/live-calls.js";
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
        .filter(
          (a) =>
            !["login", "coreshowchannels", "pjsipshowregistrationsoutbound"].includes(
              a.toLowerCase(),
            ),
        ),
      ["BlindTransfer", "Hangup"],
    );
  });
});

test("hold and unhold on the wire: Getvar, Setvar, one dual Redirect, then Bridge", async () => {
  await withPort(async (control, ami) => {
    const prefix = "org_aaaaaaaa-0000-4000-8000-000000000001_";
    const phone = `PJSIP/${prefix}101-00000002`;
    const peer = `PJSIP/${prefix}102-00000003`;
    ami.addBridgedCall(phone, peer);
    const call: LiveCall = {
      linkedid: "1700000000.2",
      since: new Date(0),
      channels: [phone, peer].map((channel, i) => ({
        channel,
        state: "Up",
        uniqueid: `1700000000.${2 + i}`,
        linkedid: "1700000000.2",
        callerIdNum: "",
        callerIdName: "",
        connectedLineNum: "",
        accountcode: "aaaaaaaa-0000-4000-8000-000000000001",
        context: "",
        exten: "",
        orgId: "aaaaaaaa-0000-4000-8000-000000000001",
        since: new Date(0),
      })),
    };
    const deps = {
      control,
      live: { callsOf: () => [call], callOf: () => call, tracking: true },
      contextPrefix: async () => prefix,
    };
    const mark = ami.received.length;
    const held = await holdCall(deps, "org", call.linkedid);
    assert.equal(held, { success: true, channel: phone, held: peer });
    assert.is(ami.channels.get(peer)!.place, `${prefix}hold,s,1`);
    assert.is(ami.channels.get(phone)!.place, `${prefix}hold,park,1`);
    const redirect = ami.received.find((a) => a.action === "Redirect")!;
    const { actionid: _id, ...sent } = Object.fromEntries(
      Object.entries(redirect.fields).map(([k, v]) => [k.toLowerCase(), v]),
    );
    assert.equal(sent, {
      action: "Redirect",
      channel: peer,
      context: `${prefix}hold`,
      exten: "s",
      priority: "1",
      extrachannel: phone,
      extracontext: `${prefix}hold`,
      extraexten: "park",
      extrapriority: "1",
    });
    const back = await unholdCall(deps, "org", call.linkedid);
    assert.equal(back, held);
    assert.is(ami.channels.get(phone)!.bridgedWith, peer);
    assert.is(ami.channels.get(phone)!.vars.get("PBX_HOLD_PEER"), "");
    assert.equal(
      ami.received
        .slice(mark)
        .filter((a) => /^(getvar|setvar|redirect|bridge)$/i.test(a.action))
        .map((a) => `${a.action} ${a.fields.Variable ?? a.fields.variable ?? ""}`.trim()),
      [
        "Getvar PBX_HOLD_PEER",
        "Getvar BRIDGEPEER",
        "Setvar PBX_HOLD_PEER",
        "Redirect",
        "Getvar PBX_HOLD_PEER",
        "Bridge",
        "Setvar PBX_HOLD_PEER",
      ],
    );
    // The held party hangs up while on hold: the engine's "Channel2 does not exist" is a 409.
    await holdCall(deps, "org", call.linkedid);
    ami.channels.delete(peer);
    const refused = await unholdCall(deps, "org", call.linkedid).then(
      () => null,
      (error: Error & { status?: number }) => error,
    );
    assert.is(refused?.status, 409);
    assert.is(refused?.message, "The held party has hung up");
    // The phone gone too: Getvar answers no such channel, and the call is not found.
    ami.channels.clear();
    const gone = await holdCall(deps, "org", call.linkedid).then(
      () => null,
      (error: Error & { status?: number }) => error,
    );
    assert.is(gone?.status, 404);
  });
});

test.run();
