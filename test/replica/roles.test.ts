// Leases and roles on an injected clock: a role runs on one replica at a time, a renewal keeps
// it, an expired lease moves to another replica without anyone sleeping, a replica that cannot
// renew stops the role, and stopping gives the lease up at once.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { LeaseLostError, ReplicaRoles, type Role } from "../../src/replica/roles.js";
import type { Db } from "../../src/store/database.js";
import { createLeaseRepository } from "../../src/store/lease-repository.js";
import { FakeClock } from "../deploy/helpers.js";
import { freshStore } from "../store/helpers.js";

const T0 = Date.parse("2026-03-01T10:00:00.000Z");

/** Wall time driven by the fake timers, so a lease's expiry moves with `advance`. */
function wall(timers: FakeClock) {
  return () => new Date(T0 + timers.now());
}

function recordingRole(name: string, log: string[], who: string): Role {
  return {
    name,
    start: () => {
      log.push(`${who} start ${name}`);
    },
    stop: () => {
      log.push(`${who} stop ${name}`);
    },
  };
}

/** Two replicas r1 and r2 offering the same roles on one store, one fake clock, one log. */
function twoReplicas(store: { db: Db }, roleNames: string[], ttlMs?: number) {
  const timers = new FakeClock();
  const clock = wall(timers);
  const log: string[] = [];
  const make = (id: string) => {
    const roles = new ReplicaRoles({ db: store.db, replicaId: id, clock, timers, ttlMs });
    for (const name of roleNames) roles.add(recordingRole(name, log, id));
    return roles;
  };
  return { one: make("r1"), two: make("r2"), timers, log };
}

/** Lets the store calls a timer callback started settle (the fake timers run them synchronously). */
async function settle(roles: ReplicaRoles[]): Promise<void> {
  for (let i = 0; i < 5; i++) await Promise.all(roles.map((r) => r.tick()));
  await Promise.all(roles.map((r) => r.idle()));
}

test("a lease is held by one holder until it expires; its holder renews it", async () => {
  const store = await freshStore();
  try {
    const leases = createLeaseRepository(store.db);
    const at = (ms: number) => new Date(T0 + ms);
    assert.is(await leases.acquire("deployer:x", "a", at(0), 4000), 1, "a takes it: term 1");
    assert.is(await leases.acquire("deployer:x", "b", at(1000), 4000), null, "a holds it");
    assert.is(await leases.acquire("deployer:x", "a", at(3000), 4000), 1, "a renews: same term");
    assert.is(await leases.acquire("deployer:x", "b", at(6000), 4000), null, "renewed until 7000");
    assert.is(await leases.acquire("deployer:x", "b", at(7000), 4000), 2, "expired: b, term 2");
    assert.is(await leases.acquire("deployer:x", "a", at(7001), 4000), null, "a lost it");
    const [row] = await leases.list();
    assert.equal(row, {
      name: "deployer:x",
      holder: "b",
      acquired_at: at(7000).toISOString(),
      expires_at: at(11_000).toISOString(),
      epoch: 2,
    });
    assert.ok(await leases.holds("deployer:x", "b", 2, at(10_999)));
    assert.not.ok(await leases.holds("deployer:x", "b", 2, at(11_000)), "expired");
    assert.not.ok(await leases.holds("deployer:x", "a", 1, at(7001)), "a's term is over");
    await leases.release("deployer:x", "a");
    assert.ok(await leases.holds("deployer:x", "b", 2, at(7001)), "only the holder can release");
    await leases.release("deployer:x", "b");
    assert.not.ok(await leases.holds("deployer:x", "b", 2, at(7001)), "released");
    assert.is(
      await leases.acquire("deployer:x", "a", at(7002), 4000),
      3,
      "released: free at once, in a new term (never an old one again)",
    );
    assert.is(
      await leases.acquire("deployer:x", "a", at(20_000), 4000),
      4,
      "a's own lease retaken after it expired: a new term",
    );
  } finally {
    await store.close();
  }
});

test("fencing: a holder paused past its expiry is refused once another took over, on the injected clock", async () => {
  const store = await freshStore();
  const { one, two, timers } = twoReplicas(store, ["deployer:e1"], 4000);
  try {
    await one.start();
    await two.start();
    await one.assertHolds("deployer:e1");
    await two.assertHolds("deployer:e1").then(
      () => assert.unreachable("r2 never held it"),
      (error: unknown) => assert.instance(error, LeaseLostError),
    );
    // r1 is paused (no renewals, no ticks: it has not noticed anything) past its expiry...
    const paused = one as unknown as { running: boolean };
    paused.running = false;
    timers.advance(4000);
    await one.assertHolds("deployer:e1").then(
      () => assert.unreachable("expired"),
      (error: unknown) => assert.instance(error, LeaseLostError),
    );
    // ...and r2 takes over: r1, still believing it holds the role, is refused by the fence.
    timers.advance(1000);
    await settle([two]);
    assert.equal(two.held(), ["deployer:e1"]);
    assert.equal(one.held(), ["deployer:e1"], "r1 has not noticed");
    await one.assertHolds("deployer:e1").then(
      () => assert.unreachable("taken over"),
      (error: unknown) => assert.instance(error, LeaseLostError),
    );
    await two.assertHolds("deployer:e1");
  } finally {
    await two.stop();
    await store.close();
  }
});

test("two replicas: each role runs on one; a dead holder's roles move after the lease", async () => {
  const store = await freshStore();
  const { one, two, timers, log } = twoReplicas(store, ["deployer:e1", "ticket-poller"], 4000);
  try {
    await one.start();
    await two.start();
    assert.equal(one.held(), ["deployer:e1", "ticket-poller"]);
    assert.equal(two.held(), []);
    // r1 keeps renewing: nothing moves however long it runs.
    for (let i = 0; i < 10; i++) {
      timers.advance(1000);
      await settle([one, two]);
    }
    assert.equal(two.held(), []);
    // r1 "dies": no more renewals. Before the lease has run out nobody else has it...
    const dead = one as unknown as { running: boolean };
    dead.running = false;
    timers.advance(2000);
    await settle([two]);
    assert.equal(two.held(), [], "lease not yet expired");
    // ...and once it has, r2 takes both roles.
    timers.advance(3000);
    await settle([two]);
    assert.equal(two.held(), ["deployer:e1", "ticket-poller"]);
    assert.equal([...log].sort(), [
      "r1 start deployer:e1",
      "r1 start ticket-poller",
      "r2 start deployer:e1",
      "r2 start ticket-poller",
    ]);
  } finally {
    await two.stop();
    await store.close();
  }
});

test("a holder that cannot renew stops its role; stop() releases the leases at once", async () => {
  const store = await freshStore();
  const { one, two, log } = twoReplicas(store, ["retention"]);
  try {
    await one.start();
    assert.ok(one.holds("retention"));
    // The store stops answering r1's renewals: it must stop before its lease runs out.
    const leases = (one as unknown as { leases: { acquire: () => Promise<boolean> } }).leases;
    const real = leases.acquire;
    leases.acquire = () => Promise.reject(new Error("store unreachable"));
    await one.tick();
    assert.not.ok(one.holds("retention"));
    await one.idle();
    assert.equal(log, ["r1 start retention", "r1 stop retention"]);
    leases.acquire = real;
    // A clean stop gives the lease up: r2 takes it without waiting for the expiry.
    await one.tick();
    assert.ok(one.holds("retention"));
    await one.stop();
    await two.start();
    assert.ok(two.holds("retention"), "taken at once after the release");
  } finally {
    await two.stop();
    await store.close();
  }
});

test("a removed role stops and gives its lease up at once: another replica takes it", async () => {
  const store = await freshStore();
  try {
    const { one, two, log } = twoReplicas(store, ["deployer:node:n1", "retention"]);
    await one.start();
    await two.start();
    await settle([one, two]);
    assert.equal(one.held(), ["deployer:node:n1", "retention"]);
    await one.remove("deployer:node:n1");
    assert.equal(one.held(), ["retention"], "no longer offered");
    assert.ok(log.includes("r1 stop deployer:node:n1"), "stopped before its lease was released");
    await settle([one, two]);
    assert.equal(two.held(), ["deployer:node:n1"], "released, not left to expire");
    await one.remove("deployer:node:unknown");
    await one.stop();
    await two.stop();
  } finally {
    await store.close();
  }
});

test.run();
