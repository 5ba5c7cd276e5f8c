// trunk.registered / trunk.failed from the engine's outbound registrations, replayed from what a
// real Asterisk 22 sent (fixtures/registrations/trunk-registrations.json, recorded by
// test/engine/trunk-webhooks.test.ts: org A's registrar answered 200 OK, org B's 403). The
// Registry event names no org; the list that follows names each registration, and each change
// reaches the org that owns the trunk only, once, with its documented data.
import { readFileSync } from "node:fs";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { type CallTracking, startCallTracking } from "../../src/api/call-tracking.js";
import type { AmiMessage } from "../../src/engine/ami-connection.js";
import {
  isOutboundRegistryEvent,
  type OutboundRegistration,
  outboundRegistrationOf,
} from "../../src/engine/registration-events.js";
import { FakeAmiServer } from "../../src/engine/testing/fake-ami.js";
import { freshStore, insertOrg } from "../store/helpers.js";
import { addWebhook, testContext } from "../webhooks/helpers.js";
import { assertDocumented, outboxRows } from "./outbox-rows.js";

const ORG_A = "aaaaaaaa-0000-4000-8000-000000000001";
const ORG_B = "bbbbbbbb-0000-4000-8000-000000000002";
const ORG_C = "cccccccc-0000-4000-8000-000000000003";
const NOW = new Date("2026-11-25T08:00:00Z");
const EVENTS = ["trunk.registered", "trunk.failed"] as const;

const recorded = JSON.parse(
  readFileSync(
    new URL("../../fixtures/registrations/trunk-registrations.json", import.meta.url),
    "utf8",
  ),
) as { registry: Record<string, string>[]; list: Record<string, string>[] };

const listed = (): OutboundRegistration[] =>
  recorded.list.map((item) => outboundRegistrationOf(item as AmiMessage)!);

interface Context {
  store: Awaited<ReturnType<typeof freshStore>>;
  tracking: CallTracking;
}

const test = suite<Context>("trunk registration webhooks from recorded engine events");

test.before.each(async (context) => {
  context.store = await freshStore();
  for (const org of [ORG_A, ORG_B, ORG_C]) {
    await insertOrg(context.store.db, org, org[0]!, `org_${org}_`);
  }
  const ctx = testContext(context.store.db, () => NOW);
  for (const org of [ORG_A, ORG_B, ORG_C]) {
    await addWebhook(ctx, `http://127.0.0.1:9/${org}`, { events: [...EVENTS] }, org);
  }
  context.tracking = startCallTracking({ db: context.store.db, clock: () => NOW });
  await context.tracking.idle();
});

test.after.each(async ({ store, tracking }) => {
  await tracking.stop();
  await store.close();
});

test("the recorded events: Registry names no registration, the list names each", () => {
  for (const event of recorded.registry) {
    assert.ok(isOutboundRegistryEvent(event as AmiMessage));
    assert.not.ok("objectname" in event, "if Asterisk named it here, the list would be moot");
  }
  assert.equal(
    listed().map((r) => [r.name, r.status]),
    [
      [`org_${ORG_A}_trunk_carrier`, "Registered"],
      [`org_${ORG_B}_trunk_carrier`, "Rejected"],
    ],
  );
});

test("each org gets its own trunk's change only, documented", async (context) => {
  context.tracking.feedTrunks(listed());
  await context.tracking.idle();
  const rowsA = await outboxRows(context.store.db, ORG_A);
  const rowsB = await outboxRows(context.store.db, ORG_B);
  assert.equal(rowsA, [
    [
      "trunk.registered",
      {
        trunk: "carrier",
        registration: `org_${ORG_A}_trunk_carrier`,
        status: "Registered",
        previous_status: null,
        server_uri: "sip:127.0.0.3:5070",
        client_uri: "sip:0801234567@127.0.0.3:5070",
        at: NOW.toISOString(),
      },
    ],
  ]);
  assert.equal(
    rowsB.map(([type, data]) => [type, data.registration, data.status]),
    [["trunk.failed", `org_${ORG_B}_trunk_carrier`, "Rejected"]],
  );
  assertDocumented([...rowsA, ...rowsB]);
  assert.equal(await outboxRows(context.store.db, ORG_C), [], "an org with no trunk gets nothing");
});

test("a re-listing, a restart or a refresh sends nothing twice; a real change sends again", async (context) => {
  context.tracking.feedTrunks(listed());
  context.tracking.feedTrunks(listed());
  await context.tracking.stop();
  context.tracking = startCallTracking({ db: context.store.db, clock: () => NOW });
  context.tracking.feedTrunks(listed());
  await context.tracking.idle();
  assert.is((await outboxRows(context.store.db, ORG_A)).length, 1);
  // A's registration lapses, then registers again: a new trunk.registered; B's is fixed.
  const [a, b] = listed();
  context.tracking.feedTrunks([{ ...a!, status: "Unregistered" }, b!]);
  context.tracking.feedTrunks([a!, { ...b!, status: "Registered" }]);
  await context.tracking.idle();
  assert.equal(
    (await outboxRows(context.store.db, ORG_A)).map(([type, data]) => [type, data.previous_status]),
    [
      ["trunk.registered", null],
      ["trunk.registered", "Unregistered"],
    ],
  );
  assert.equal(
    (await outboxRows(context.store.db, ORG_B)).map(([type]) => type),
    ["trunk.failed", "trunk.registered"],
  );
});

test("names of no org, or not a trunk's, emit nothing", async (context) => {
  const [a] = listed();
  context.tracking.feedTrunks([
    { ...a!, name: "gateway_trunk_carrier" },
    { ...a!, name: `org_${ORG_C}_101` },
    { ...a!, name: `org_${ORG_C}_trunk_` },
  ]);
  await context.tracking.idle();
  for (const org of [ORG_A, ORG_B, ORG_C]) {
    assert.equal(await outboxRows(context.store.db, org), []);
  }
});

test("over AMI: a Registry event makes the service list the registrations, then emit", async (context) => {
  await context.tracking.stop();
  const ami = new FakeAmiServer();
  const port = await ami.listen();
  ami.outboundRegistrations = [];
  const tracking = startCallTracking({
    db: context.store.db,
    clock: () => NOW,
    ami: { host: "127.0.0.1", port, username: "pbxctl", secret: "secret" },
  });
  context.tracking = tracking;
  try {
    await tracking.connection!.ready();
    const lists = () =>
      ami.received.filter((a) => a.action === "PJSIPShowRegistrationsOutbound").length;
    // The login lists them once (nothing yet).
    for (let i = 0; lists() < 1 && i < 200; i++) await new Promise((r) => setTimeout(r, 5));
    ami.outboundRegistrations = recorded.list;
    const before = lists();
    for (const event of recorded.registry) ami.emitEvent(event);
    for (let i = 0; i < 400; i++) {
      await tracking.idle();
      if ((await outboxRows(context.store.db, ORG_B)).length > 0) break;
      await new Promise((r) => setTimeout(r, 5));
    }
    assert.ok(lists() > before, "the Registry event led to a listing");
    assert.ok(lists() - before <= 2, "a burst of events costs at most one more listing");
    assert.equal(
      (await outboxRows(context.store.db, ORG_A)).map(([type]) => type),
      ["trunk.registered"],
    );
    assert.equal(
      (await outboxRows(context.store.db, ORG_B)).map(([type]) => type),
      ["trunk.failed"],
    );
  } finally {
    await ami.close();
  }
});

test.run();
