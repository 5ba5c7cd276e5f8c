// Registration changes through a store outage (src/api/registration-storing.ts): while the store
// is unavailable the phones' contact changes are held in the engine's order and tried again after
// the ingest's backoff on the injected timers; once it is back each is stored once, in order (a
// contact's appearance before its Removed), with its webhook. Beyond the cap the oldest go,
// counted and logged once. Trunk registration lists held collapse to the newest. A change the
// store rejects (not an outage) is still logged and dropped alone.
import { sql } from "kysely";
import type { Logger } from "pino";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { type CallTracking, startCallTracking } from "../../src/api/call-tracking.js";
import type { AmiMessage } from "../../src/engine/ami-connection.js";
import type { OutboundRegistration } from "../../src/engine/registration-events.js";
import { type CallIngestInstruments, noInstruments } from "../../src/metrics/instruments.js";
import type { Db } from "../../src/store/database.js";
import { storeDialect } from "../../src/store/dialect.js";
import { FakeClock } from "../deploy/helpers.js";
import { freshStore, insertOrg } from "../store/helpers.js";
import { addWebhook, testContext } from "../webhooks/helpers.js";
import { outboxRows } from "./outbox-rows.js";
import { keptLog, outageOf, refusedTries } from "./store-outage.js";

const ORG = "aaaaaaaa-0000-4000-8000-000000000001";
const PREFIX = `org_${ORG}_`;
const NOW = new Date("2026-11-25T08:00:00Z");
const EVENTS = ["user.registered", "user.unregistered", "trunk.registered", "trunk.failed"];

type Store = Awaited<ReturnType<typeof freshStore>>;
const test = suite<{ store: Store; trackers: CallTracking[] }>(
  "registration changes through a store outage",
);

test.before.each(async (context) => {
  context.store = await freshStore();
  context.trackers = [];
  await insertOrg(context.store.db, ORG, "A", PREFIX);
  const ctx = testContext(context.store.db, () => NOW);
  await addWebhook(ctx, `http://127.0.0.1:9/${ORG}`, { events: EVENTS }, ORG);
});

test.after.each(async ({ store, trackers }) => {
  for (const tracking of trackers) await tracking.stop();
  await store.close();
});

/** A ContactStatus event as Asterisk 22 sends it (test/calls/registration-webhooks.test.ts). */
function contactStatus(status: string, extension: string, port: number): AmiMessage {
  const aor = `${PREFIX}${extension}`;
  return {
    event: "ContactStatus",
    uri: `sip:${aor}@127.0.0.1:${port}`,
    contactstatus: status,
    aor,
    endpointname: aor,
  } as AmiMessage;
}

const trunk = (name: string, status: string): OutboundRegistration => ({
  name: `${PREFIX}trunk_${name}`,
  status,
  serverUri: `sip:${name}.example.net`,
  clientUri: `sip:pbx@${name}.example.net`,
});

/** Registration drops kept as `kind/reason` with their counts. */
function keptDrops() {
  const dropped: [string, number][] = [];
  const calls: CallIngestInstruments = {
    ...noInstruments.calls,
    registrationsDropped: (kind, reason, count) => dropped.push([`${kind}/${reason}`, count]),
  };
  return { calls, dropped };
}

function tracker(
  context: { store: Store; trackers: CallTracking[] },
  db: Db,
  options: { logger?: Logger; calls?: CallIngestInstruments; maxRegistrationsHeld?: number } = {},
) {
  const timers = new FakeClock();
  const tracking = startCallTracking({
    db,
    clock: () => NOW,
    timers,
    ...(options.logger ? { logger: options.logger } : {}),
    ...(options.calls
      ? { instruments: { calls: options.calls, ami: noInstruments.ami("events") } }
      : {}),
    ...(options.maxRegistrationsHeld !== undefined
      ? { maxRegistrationsHeld: options.maxRegistrationsHeld }
      : {}),
  });
  context.trackers.push(tracking);
  return { tracking, timers };
}

const contacts = async (db: Db) =>
  (await db.selectFrom("sip_contacts").select(["aor", "uri"]).orderBy("uri").execute()).map((row) =>
    row.uri.slice(`sip:${PREFIX}`.length),
  );

/** The webhooks written, as `type extension-or-trunk`, in the order written. */
const webhooks = async (db: Db) =>
  (await outboxRows(db, ORG)).map(
    ([type, data]) => `${type} ${String(data.extension ?? data.trunk)}`,
  );

const trunkStatuses = async (db: Db) =>
  (
    await db
      .selectFrom("trunk_registrations")
      .select(["registration", "status"])
      .orderBy("registration")
      .execute()
  ).map((row) => `${row.registration.slice(`${PREFIX}trunk_`.length)} ${row.status}`);

/** Makes the store refuse a contact of `extension` (a trigger, in the store's dialect). */
async function refuseContact(db: Db, extension: string): Promise<void> {
  const aor = `${PREFIX}${extension}`;
  if (storeDialect(db) === "postgres") {
    await sql`CREATE FUNCTION test_refuse_contact() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN IF NEW.aor = ${sql.lit(aor)} THEN RAISE EXCEPTION 'contact refused'; END IF;
      RETURN NEW; END $$`.execute(db);
    await sql`CREATE TRIGGER test_refuse_contact BEFORE INSERT ON sip_contacts
      FOR EACH ROW EXECUTE FUNCTION test_refuse_contact()`.execute(db);
    return;
  }
  await sql`CREATE TRIGGER test_refuse_contact BEFORE INSERT ON sip_contacts
    WHEN NEW.aor = ${sql.lit(aor)}
    BEGIN SELECT RAISE(ABORT, 'contact refused'); END`.execute(db);
}

const settle = async () => {
  for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve));
};

test("contact changes in an outage are held, retried with backoff, then stored once each, in order", async (context) => {
  const outage = outageOf(context.store.db);
  const { logger, said } = keptLog();
  const drops = keptDrops();
  const { tracking, timers } = tracker(context, outage.db, { logger, calls: drops.calls });
  await tracking.idle();
  outage.state.down = true;
  tracking.feed(contactStatus("Created", "101", 5061));
  tracking.feed(contactStatus("Created", "102", 5062));
  await refusedTries(outage, timers, 1);
  tracking.feed(contactStatus("Removed", "101", 5061));
  tracking.feed(contactStatus("Created", "101", 5063));
  timers.advance(199);
  await settle();
  assert.is(outage.state.failures, 1, "not again before the backoff");
  timers.advance(1);
  await refusedTries(outage, timers, 2);
  timers.advance(399);
  await settle();
  assert.is(outage.state.failures, 2, "the backoff doubled");
  assert.equal(await contacts(context.store.db), [], "nothing stored during the outage");

  outage.state.down = false;
  timers.advance(1);
  await tracking.idle();
  assert.equal(await contacts(context.store.db), ["101@127.0.0.1:5063", "102@127.0.0.1:5062"]);
  assert.equal(
    await webhooks(context.store.db),
    ["user.registered 101", "user.registered 102", "user.unregistered 101", "user.registered 101"],
    "the engine's order: 101's first contact before its Removed, then its new one",
  );
  assert.equal(drops.dropped, []);
  assert.equal(
    said.map(({ level, message }) => [level, message.split(":")[0]]),
    [
      ["warn", "registration changes held"],
      ["info", "the store is available again"],
    ],
    "logged when it began and ended, not per try",
  );
});

test("a contact change the store rejects is logged and dropped alone, during recovery too", async (context) => {
  await refuseContact(context.store.db, "103");
  const outage = outageOf(context.store.db);
  const { logger, said } = keptLog();
  const drops = keptDrops();
  const { tracking, timers } = tracker(context, outage.db, { logger, calls: drops.calls });
  await tracking.idle();
  outage.state.down = true;
  for (const extension of ["101", "103", "104"]) {
    tracking.feed(contactStatus("Created", extension, 5060));
  }
  await refusedTries(outage, timers, 1);
  outage.state.down = false;
  timers.advance(200);
  await tracking.idle();
  assert.equal(await contacts(context.store.db), ["101@127.0.0.1:5060", "104@127.0.0.1:5060"]);
  assert.equal(drops.dropped, [["contact/rejected", 1]]);
  assert.equal(
    said
      .filter(({ level }) => level === "error")
      .map(({ message, fields }) => [message, fields.aor]),
    [["contact change not stored", `${PREFIX}103`]],
  );
});

test("beyond the cap the oldest held contact changes go, counted, logged once", async (context) => {
  const outage = outageOf(context.store.db);
  const { logger, said } = keptLog();
  const drops = keptDrops();
  const { tracking, timers } = tracker(context, outage.db, {
    logger,
    calls: drops.calls,
    maxRegistrationsHeld: 3,
  });
  await tracking.idle();
  outage.state.down = true;
  tracking.feed(contactStatus("Created", "101", 5060));
  await refusedTries(outage, timers, 1);
  for (const extension of ["102", "103", "104", "105"]) {
    tracking.feed(contactStatus("Created", extension, 5060));
  }
  outage.state.down = false;
  timers.advance(200);
  await tracking.idle();
  assert.equal(
    await contacts(context.store.db),
    ["103@127.0.0.1:5060", "104@127.0.0.1:5060", "105@127.0.0.1:5060"],
    "the newest three",
  );
  assert.equal(drops.dropped, [
    ["contact/overflow", 1],
    ["contact/overflow", 1],
  ]);
  assert.is(said.filter(({ message }) => message.startsWith("contact changes dropped")).length, 1);
});

test("trunk lists held collapse to the newest: each trunk's latest state is stored, once", async (context) => {
  const outage = outageOf(context.store.db);
  const drops = keptDrops();
  const { tracking, timers } = tracker(context, outage.db, { calls: drops.calls });
  tracking.feedTrunks([trunk("a", "Registered")]);
  await tracking.idle();
  outage.state.down = true;
  tracking.feedTrunks([trunk("a", "Unregistered"), trunk("b", "Registered")]);
  await refusedTries(outage, timers, 1);
  const failuresPerTry = outage.state.failures;
  tracking.feedTrunks([trunk("a", "Rejected"), trunk("b", "Registered")]);
  tracking.feedTrunks([trunk("a", "Rejected"), trunk("c", "Rejected")]);
  timers.advance(200);
  await refusedTries(outage, timers, 2 * failuresPerTry);
  assert.is(outage.state.failures, 2 * failuresPerTry, "one list tried per turn, not three");
  outage.state.down = false;
  timers.advance(400);
  await tracking.idle();
  assert.equal(await trunkStatuses(context.store.db), ["a Rejected", "c Rejected"]);
  assert.equal(await webhooks(context.store.db), [
    "trunk.registered a",
    "trunk.failed a",
    "trunk.failed c",
  ]);
  assert.equal(drops.dropped, [], "a superseded list is not a loss");
});

test("stop while the store stays down: held registration changes are let go and counted", async (context) => {
  const outage = outageOf(context.store.db);
  const { logger, said } = keptLog();
  const drops = keptDrops();
  const { tracking, timers } = tracker(context, outage.db, { logger, calls: drops.calls });
  await tracking.idle();
  outage.state.down = true;
  tracking.feed(contactStatus("Created", "101", 5060));
  tracking.feed(contactStatus("Removed", "101", 5060));
  tracking.feedTrunks([trunk("a", "Registered")]);
  await refusedTries(outage, timers, 2);
  await tracking.stop();
  assert.equal(drops.dropped.sort(), [
    ["contact/shutdown", 2],
    ["trunks/shutdown", 1],
  ]);
  assert.ok(said.some(({ message }) => message.startsWith("contact changes not stored")));
  outage.state.down = false;
  assert.equal(await contacts(context.store.db), []);
});

test.run();
