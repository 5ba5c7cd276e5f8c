// Realtime PJSIP's retries, waited for (src/deploy/realtime-pjsip.ts): a save whose rows the store
// could not write (a PostgreSQL restart drops the pool's connections) is retried on the injected
// timers. `idle()` says only that the attempt ended; `settled()` resolves once the retry wrote the
// rows and told the engine, and gives up, naming what is owed, when the store stays down. The
// store here is a fake whose writes fail while the test says so; the engine a fake target.
import { test } from "uvu";
import * as assert from "uvu/assert";
import type { RealtimeRow } from "../../src/compiler/pjsip-realtime.js";
import { RealtimePjsip } from "../../src/deploy/realtime-pjsip.js";
import { ReloadQueue } from "../../src/deploy/reload-queue.js";
import { freshStore } from "../store/helpers.js";
import { FakeRealtimeStore, fakeRealtimeEngine } from "./fake-realtime.js";
import { FakeClock } from "./helpers.js";

const ORG = "0b9a3c1e-2222-4222-8222-000000000001";
const PREFIX = "acme_";
const USER = `${PREFIX}2001`;

/** The org's rows as the compiler gives them: one phone. */
const ROWS: RealtimeRow[] = [
  { table: "ps_auths", id: USER, columns: { id: USER, username: USER } },
  { table: "ps_aors", id: USER, columns: { id: USER } },
  { table: "ps_endpoints", id: USER, columns: { id: USER, auth: USER, aors: USER } },
];

async function withRealtime(
  run: (context: {
    realtime: RealtimePjsip;
    store: FakeRealtimeStore;
    engine: ReturnType<typeof fakeRealtimeEngine>;
    clock: FakeClock;
  }) => Promise<void>,
): Promise<void> {
  const db = await freshStore({ sqliteOnly: true });
  const store = new FakeRealtimeStore();
  const engine = fakeRealtimeEngine(store);
  const clock = new FakeClock();
  const realtime = new RealtimePjsip({
    db: db.db,
    builds: { orgPjsipRows: async () => ({ prefix: PREFIX, rows: ROWS }) },
    rows: store,
    target: engine.target,
    reloads: new ReloadQueue(engine.target),
    timers: clock,
  });
  try {
    await run({ realtime, store, engine, clock });
  } finally {
    await realtime.stop();
    await db.close();
  }
}

/** Whether `promise` has settled once the work already queued on the event loop has run. */
async function hasSettled(promise: Promise<unknown>): Promise<boolean> {
  let settled = false;
  void promise.then(
    () => {
      settled = true;
    },
    () => {
      settled = true;
    },
  );
  await new Promise((resolve) => setImmediate(resolve));
  return settled;
}

test("rows the store could not write: idle() only says the attempt ended; settled() waits for the retry that writes them", () =>
  withRealtime(async ({ realtime, store, engine, clock }) => {
    store.down = "Connection terminated unexpectedly";
    await realtime.sync(ORG);
    // The save's pool connection died with the database restart; the database is back now.
    store.down = null;
    await realtime.idle();
    assert.is(store.rows.size, 0, "the attempt ended without the rows");
    assert.equal(realtime.owed(), { unwrittenOrgs: [ORG], engineOwed: false });

    const settled = realtime.settled({ withinMs: 60_000 });
    assert.not.ok(await hasSettled(settled), "nothing written yet: not settled");
    assert.is(clock.pendingTimers, 2, "the retry, and settled()'s bound");
    clock.advance(1000);
    await settled;
    assert.equal([...store.rows.keys()].sort(), [
      `ps_aors/${USER}`,
      `ps_auths/${USER}`,
      `ps_endpoints/${USER}`,
    ]);
    assert.equal(engine.expired.sort(), [
      `res_pjsip/aor ${USER}`,
      `res_pjsip/auth ${USER}`,
      `res_pjsip/endpoint ${USER}`,
    ]);
    assert.equal(await realtime.pending(), [], "the engine took every object");
    assert.is(realtime.owed(), null);
    assert.is(clock.pendingTimers, 0, "settled()'s bound is cancelled");
  }));

test("an engine that was down: settled() waits for the retried flush", () =>
  withRealtime(async ({ realtime, store, engine, clock }) => {
    engine.setDown(true);
    await realtime.sync(ORG);
    assert.is(store.rows.size, 3, "the rows are written");
    assert.equal(realtime.owed(), { unwrittenOrgs: [], engineOwed: true });
    engine.setDown(false);
    const settled = realtime.settled({ withinMs: 60_000 });
    assert.not.ok(await hasSettled(settled));
    clock.advance(1000);
    await settled;
    assert.equal(await realtime.pending(), []);
    assert.is(engine.expired.length, 3);
  }));

test("a store that stays down: settled() gives up after its bound on the timers, naming what is owed", () =>
  withRealtime(async ({ realtime, store, clock }) => {
    store.down = "connect ECONNREFUSED 127.0.0.1:5432";
    await realtime.sync(ORG);
    const settled = realtime.settled({ withinMs: 10_000 });
    const failure = settled.then(
      () => "settled",
      (error: Error) => error.message,
    );
    // Each retry fails again and waits longer (1 s, 2 s, 5 s): the bound comes first.
    for (let second = 0; second < 10 && !(await hasSettled(settled)); second++) {
      clock.advance(1000);
      await realtime.idle();
    }
    // (Each retry's flush could not read the queue either: the engine may be owed too.)
    assert.is(
      await failure,
      `realtime PJSIP not settled within 10 s: rows of org ${ORG} not written; changes not taken by the engine yet`,
    );
    assert.is(store.rows.size, 0);
  }));

test("stopped while settled() waits: it ends, naming what is owed", () =>
  withRealtime(async ({ realtime, store }) => {
    store.down = "Connection terminated unexpectedly";
    await realtime.sync(ORG);
    const failure = realtime.settled({ withinMs: 60_000 }).then(
      () => "settled",
      (error: Error) => error.message,
    );
    assert.not.ok(await hasSettled(failure));
    await realtime.stop();
    assert.is(await failure, `realtime PJSIP stopped: rows of org ${ORG} not written`);
  }));

test.run();
