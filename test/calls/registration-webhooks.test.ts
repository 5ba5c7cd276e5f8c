// user.registered / user.unregistered from the engine's PJSIP ContactStatus events (fields as
// Asterisk 22 sent them in the engine test): each org's outbox gets its own
// phones' changes only, a replayed event or a service restart writes no second delivery, and
// only an AOR's first contact / last contact counts.
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { type CallTracking, startCallTracking } from "../../src/api/call-tracking.js";
import type { AmiMessage } from "../../src/engine/ami-connection.js";
import { contactChangeOf } from "../../src/engine/registration-events.js";
import { freshStore, insertOrg } from "../store/helpers.js";
import { addWebhook, testContext } from "../webhooks/helpers.js";
import { assertDocumented, outboxRows } from "./outbox-rows.js";

const ORG_A = "aaaaaaaa-0000-4000-8000-000000000001";
const ORG_B = "bbbbbbbb-0000-4000-8000-000000000002";
const PREFIX_A = `org_${ORG_A}_`;
// Org B's prefix contains org A's: the longer one must win for B's names, never A's.
const PREFIX_B = `x${PREFIX_A}`;
const NOW = new Date("2026-11-25T08:00:00Z");
const USER_EVENTS = ["user.registered", "user.unregistered"] as const;

/**
 * A ContactStatus event as Asterisk 22 sends it (recorded from the engine test: baresip
 * registering gives `NonQualified`, unregistering `Removed`; keys lower-cased by the AMI client).
 */
function contactStatus(status: string, aor: string, port = 45201): AmiMessage {
  return {
    event: "ContactStatus",
    privilege: "system,all",
    timestamp: "1795599989.456849",
    uri: `sip:${aor}-0x55b55cfa13c0@127.0.0.1:${port}`,
    contactstatus: status,
    aor,
    endpointname: aor,
    roundtripusec: "0",
  } as AmiMessage;
}

interface Context {
  store: Awaited<ReturnType<typeof freshStore>>;
  tracking: CallTracking;
}

const test = suite<Context>("registration webhooks from engine ContactStatus events");

test.before.each(async (context) => {
  context.store = await freshStore();
  await insertOrg(context.store.db, ORG_A, "A", PREFIX_A);
  await insertOrg(context.store.db, ORG_B, "B", PREFIX_B);
  const ctx = testContext(context.store.db, () => NOW);
  for (const org of [ORG_A, ORG_B]) {
    await addWebhook(ctx, `http://127.0.0.1:9/${org}`, { events: [...USER_EVENTS] }, org);
  }
  context.tracking = startCallTracking({ db: context.store.db, clock: () => NOW });
  await context.tracking.idle();
});

test.after.each(async ({ store, tracking }) => {
  await tracking.stop();
  await store.close();
});

async function feed(tracking: CallTracking, events: AmiMessage[]): Promise<void> {
  for (const event of events) tracking.feed(event);
  await tracking.idle();
}

const outbox = ({ store }: Context, org: string) => outboxRows(store.db, org);

test("Removed removes a contact; every other status says it is there", () => {
  assert.equal(contactChangeOf(contactStatus("Removed", `${PREFIX_A}101`)), {
    change: "removed",
    aor: `${PREFIX_A}101`,
    endpoint: `${PREFIX_A}101`,
    uri: `sip:${PREFIX_A}101-0x55b55cfa13c0@127.0.0.1:45201`,
  });
  for (const status of ["NonQualified", "Created", "Reachable", "Unreachable", "Updated"]) {
    assert.is(contactChangeOf(contactStatus(status, `${PREFIX_A}101`))?.change, "present", status);
  }
  assert.is(contactChangeOf({ event: "Newchannel" } as AmiMessage), null);
});

test("a phone's register and unregister reach its own org only, documented", async (context) => {
  await feed(context.tracking, [
    contactStatus("NonQualified", `${PREFIX_A}101`),
    contactStatus("Updated", `${PREFIX_A}101`),
    contactStatus("Removed", `${PREFIX_A}101`),
  ]);
  const rowsA = await outbox(context, ORG_A);
  assert.equal(
    rowsA.map(([type]) => type),
    ["user.registered", "user.unregistered"],
  );
  assert.equal(rowsA[0]![1], {
    extension: "101",
    endpoint: `${PREFIX_A}101`,
    contact: `sip:${PREFIX_A}101-0x55b55cfa13c0@127.0.0.1:45201`,
    at: NOW.toISOString(),
  });
  assertDocumented(rowsA);
  assert.equal(await outbox(context, ORG_B), []);

  await feed(context.tracking, [contactStatus("NonQualified", `${PREFIX_B}101`)]);
  const rowsB = await outbox(context, ORG_B);
  assert.equal(
    rowsB.map(([type, data]) => [type, data.endpoint]),
    [["user.registered", `${PREFIX_B}101`]],
  );
  assert.is((await outbox(context, ORG_A)).length, 2, "org A got nothing of org B's phone");
});

test("replayed events and a restarted service deliver nothing twice", async (context) => {
  const created = contactStatus("NonQualified", `${PREFIX_A}101`);
  await feed(context.tracking, [created, created]);
  await context.tracking.stop();
  context.tracking = startCallTracking({ db: context.store.db, clock: () => NOW });
  const removed = contactStatus("Removed", `${PREFIX_A}101`);
  await feed(context.tracking, [created, removed, removed]);
  assert.equal(
    (await outbox(context, ORG_A)).map(([type]) => type),
    ["user.registered", "user.unregistered"],
  );
});

test("a second phone on the extension changes nothing until the last one leaves", async (context) => {
  const aor = `${PREFIX_A}102`;
  await feed(context.tracking, [
    contactStatus("NonQualified", aor, 5062),
    contactStatus("NonQualified", aor, 5064),
    contactStatus("Removed", aor, 5062),
  ]);
  assert.equal(
    (await outbox(context, ORG_A)).map(([type]) => type),
    ["user.registered"],
  );
  await feed(context.tracking, [contactStatus("Removed", aor, 5064)]);
  assert.equal(
    (await outbox(context, ORG_A)).map(([type]) => type),
    ["user.registered", "user.unregistered"],
  );
});

test("a phone of an org created after the orgs were loaded is found at once", async (context) => {
  const orgC = "cccccccc-0000-4000-8000-000000000003";
  await insertOrg(context.store.db, orgC, "C", `org_${orgC}_`);
  const ctx = testContext(context.store.db, () => NOW);
  await addWebhook(ctx, "http://127.0.0.1:9/c", { events: [...USER_EVENTS] }, orgC);
  await feed(context.tracking, [contactStatus("NonQualified", `org_${orgC}_101`)]);
  assert.equal(
    (await outbox(context, orgC)).map(([type]) => type),
    ["user.registered"],
  );
});

test("AORs of no org and trunk AORs emit nothing", async (context) => {
  await feed(context.tracking, [
    contactStatus("NonQualified", "org_unknown_101"),
    contactStatus("NonQualified", `${PREFIX_A}trunk_carrier`),
    contactStatus("NonQualified", "101"),
  ]);
  assert.equal(await outbox(context, ORG_A), []);
  assert.equal(await outbox(context, ORG_B), []);
});

test.run();
