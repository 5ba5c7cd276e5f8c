// Following a move (`pbxctl org move` without --no-wait): it waits while a replica holds the
// org-moves lease (or one may still take it over), and says why it stops once none has for a
// takeover's time, counted from the later of the lease's expiry and the start of the wait. Fake
// timers, each wait ended by the test, and a clock that moves with them: no sleep.
import { sql } from "kysely";
import { test } from "uvu";
import * as assert from "uvu/assert";
import type { TimerHandle, Timers } from "../../src/clock.js";
import { createEngineNode } from "../../src/domain/nodes/engine-nodes.js";
import { ORG_MOVES_ROLE } from "../../src/domain/nodes/org-move-driver.js";
import {
  followOrgMove,
  NO_DRIVER_AFTER_MS,
  NoMoveDriver,
} from "../../src/domain/nodes/org-move-follow.js";
import { moveOrg, type OrgMoveView } from "../../src/domain/nodes/org-moves.js";
import { createLeaseRepository } from "../../src/store/lease-repository.js";
import { startTestApp, type TestApp } from "../api/helpers.js";

const T0 = Date.parse("2026-03-01T10:00:00.000Z");

async function movingOrg(app: TestApp, clock: () => Date): Promise<string> {
  const deps = { db: app.db, config: app.config, clock };
  for (const name of ["node-1", "node-2"]) {
    await createEngineNode(deps, {
      name,
      ami_username: "pbxctl",
      ami_secret: "secret",
      sip_address: "10.0.0.11",
      capacity: 5,
    });
  }
  const org = await app.createOrg("A");
  await moveOrg(deps, org.id, { to: "node-2" });
  return org.id;
}

/**
 * Timers that wait for the test: each wait is pending until `fire()` moves time to its end and
 * ends it, so the follower's store reads (however long they take) never race the clock.
 */
class StepTimers implements Timers {
  private time = 0;
  private pending: { due: number; callback: () => void } | null = null;
  private waiting: (() => void) | null = null;

  now(): number {
    return this.time;
  }

  setTimer(ms: number, callback: () => void): TimerHandle {
    const timer = { due: this.time + ms, callback };
    this.pending = timer;
    this.waiting?.();
    return {
      cancel: () => {
        if (this.pending === timer) this.pending = null;
      },
    };
  }

  /** Resolves once a wait is pending. */
  nextWait(): Promise<void> {
    if (this.pending) return Promise.resolve();
    return new Promise((resolve) => {
      this.waiting = resolve;
    });
  }

  /** Ends the pending wait, time moving to its end. */
  fire(): void {
    const timer = this.pending!;
    this.pending = null;
    this.waiting = null;
    this.time = timer.due;
    timer.callback();
  }
}

/** Runs `follow`, ending each of its waits in turn until it ends or `until` ms have passed. */
async function drive(
  timers: StepTimers,
  follow: Promise<OrgMoveView>,
  until = 60_000,
): Promise<{ move?: OrgMoveView; error?: Error; at: number }> {
  const ended = follow.then(
    (move) => ({ move }),
    (error: Error) => ({ error }),
  );
  for (;;) {
    const next = await Promise.race([ended, timers.nextWait().then(() => null)]);
    if (next) return { ...next, at: timers.now() };
    if (timers.now() >= until) return { at: timers.now() };
    timers.fire();
  }
}

test("no replica ever held the lease: it stops after a takeover's time and says so", async () => {
  const app = await startTestApp();
  const timers = new StepTimers();
  const clock = () => new Date(T0 + timers.now());
  try {
    const orgId = await movingOrg(app, clock);
    const looks: string[] = [];
    const ended = await drive(
      timers,
      followOrgMove({ db: app.db, clock }, orgId, {
        timers,
        onLook: (move) => looks.push(move.phase),
      }),
    );
    assert.instance(ended.error, NoMoveDriver);
    assert.is(ended.at, NO_DRIVER_AFTER_MS);
    assert.is(
      ended.error?.message,
      "No pbxctl serve is carrying out org moves: nobody has held the org-moves lease for 5 s (no replica ever held it); the move to node-2 stays recorded (deploying) and goes on once a pbxctl serve with engine nodes runs",
    );
    assert.ok(looks.length > 1 && looks.every((phase) => phase === "deploying"));
  } finally {
    await app.close();
  }
});

test("a holder that stopped renewing: counted from its expiry; a held lease keeps it waiting to done", async () => {
  const app = await startTestApp();
  const timers = new StepTimers();
  const clock = () => new Date(T0 + timers.now());
  try {
    const orgId = await movingOrg(app, clock);
    const leases = createLeaseRepository(app.db);
    // Held until T0 + 20 s: the follower waits through it, then 5 s more, and stops.
    await leases.acquire(ORG_MOVES_ROLE, "api-1", new Date(T0), 20_000);
    const stopped = await drive(
      timers,
      followOrgMove({ db: app.db, clock }, orgId, { timers, onLook() {} }),
    );
    assert.is(stopped.at, 20_000 + NO_DRIVER_AFTER_MS);
    assert.match(
      stopped.error?.message ?? "",
      "(its last holder, api-1, stopped renewing it at 2026-03-01T10:00:20.000Z)",
    );

    // Expired long before the wait: the wait's own start counts (a replica may be taking over).
    const late = new StepTimers();
    const lateClock = () => new Date(T0 + 3_600_000 + late.now());
    const fromStart = await drive(
      late,
      followOrgMove({ db: app.db, clock: lateClock }, orgId, { timers: late, onLook() {} }),
    );
    assert.is(fromStart.at, NO_DRIVER_AFTER_MS);

    // Given up by a clean stop.
    await leases.release(ORG_MOVES_ROLE, "api-1");
    const released = await drive(
      late,
      followOrgMove({ db: app.db, clock: lateClock }, orgId, { timers: late, onLook() {} }),
    );
    assert.match(
      released.error?.message ?? "",
      "(its last holder, api-1, gave it up when it stopped)",
    );

    // Held (and renewed) all along: it waits past any grace, until the move is done.
    const held = new StepTimers();
    const heldClock = () => new Date(T0 + 7_200_000 + held.now());
    await leases.acquire(ORG_MOVES_ROLE, "api-2", heldClock(), 3_600_000);
    const follow = followOrgMove({ db: app.db, clock: heldClock }, orgId, {
      timers: held,
      onLook() {},
    });
    const waiting = await drive(held, follow, 30_000);
    assert.equal(waiting.error ?? waiting.move ?? null, null, "still waiting after 30 s");
    await sql`update org_moves set phase = 'done', finished_at = ${heldClock().toISOString()} where org_id = ${orgId}`.execute(
      app.db,
    );
    const done = await drive(held, follow, 60_000);
    assert.is(done.move?.phase, "done");
  } finally {
    await app.close();
  }
});

test.run();
