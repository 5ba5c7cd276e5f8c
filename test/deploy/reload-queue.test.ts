// The reload queue's backoff on "already in progress", driven by an injected clock.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { ReloadQueue } from "../../src/deploy/reload-queue.js";
import { EngineBusyError, type EngineTarget, type ReloadOutcome } from "../../src/engine/target.js";
import { FakeClock } from "./helpers.js";

/** A target that refuses the first `busy` reloads, recording when each one arrived. */
function busyTarget(clock: FakeClock, busy: number) {
  const arrivals: number[] = [];
  const target: EngineTarget = {
    kind: "ami",
    async reload({ command }): Promise<ReloadOutcome> {
      arrivals.push(clock.now());
      if (arrivals.length <= busy) throw new EngineBusyError("A reload is already in progress");
      return { command: command.command, status: "ok", attempts: 1, durationMs: 0 };
    },
    health: async () => ({ status: "healthy", checkedAt: "" }),
    close: async () => {},
  };
  return { target, arrivals };
}

async function settle(): Promise<void> {
  for (let i = 0; i < 10; i++) await new Promise((resolve) => setImmediate(resolve));
}

test("a refused reload is retried after 200, 400, 800 ms (doubling, capped), then succeeds", async () => {
  const clock = new FakeClock();
  const { target, arrivals } = busyTarget(clock, 3);
  const queue = new ReloadQueue(target, { timers: clock, retryInitialMs: 200, retryMaxMs: 800 });
  const done = queue.run([{ module: "dialplan", command: "dialplan reload" }], "org:org_a_");
  await settle();
  assert.equal(arrivals, [0]);
  clock.advance(199);
  await settle();
  assert.equal(arrivals, [0], "not before the first backoff");
  clock.advance(1);
  await settle();
  clock.advance(400);
  await settle();
  clock.advance(800);
  await settle();
  assert.equal(arrivals, [0, 200, 600, 1400]);
  const [outcome] = await done;
  assert.is(outcome?.status, "ok");
  assert.is(outcome?.attempts, 4);
  assert.is(queue.sent, 4);
});

test("a reload refused maxAttempts times fails with the engine's message, no more waits", async () => {
  const clock = new FakeClock();
  const { target, arrivals } = busyTarget(clock, 100);
  const queue = new ReloadQueue(target, { timers: clock, maxAttempts: 2, retryInitialMs: 50 });
  const done = queue.run(
    [{ module: "pjsip", command: "module reload res_pjsip.so" }],
    "org:org_a_",
  );
  await settle();
  clock.advance(50);
  await settle();
  const [outcome] = await done;
  assert.is(outcome?.status, "failed");
  assert.is(outcome?.error, "A reload is already in progress");
  assert.equal(arrivals, [0, 50]);
  assert.is(clock.pendingTimers, 0);
});

test("queue reloads waiting together become one, full when they name different queues", async () => {
  const clock = new FakeClock();
  const sent: string[] = [];
  let release!: () => void;
  const gate = new Promise<void>((resolve) => {
    release = resolve;
  });
  const target: EngineTarget = {
    kind: "ami",
    async reload({ command }): Promise<ReloadOutcome> {
      sent.push(command.command);
      if (sent.length === 1) await gate;
      return { command: command.command, status: "ok", attempts: 1, durationMs: 0 };
    },
    health: async () => ({ status: "healthy", checkedAt: "" }),
    close: async () => {},
  };
  const queue = new ReloadQueue(target, { timers: clock });
  const first = queue.run([{ module: "dialplan", command: "dialplan reload" }], "org:a_");
  await settle();
  // Both wait behind the running dialplan reload: by name, the second would find queues.conf
  // already loaded by the first and reload nothing.
  const a = queue.run([{ module: "queues", command: "queue reload all a_q1" }], "org:a_");
  const b = queue.run([{ module: "queues", command: "queue reload all b_q1" }], "org:b_");
  release();
  await Promise.all([first, a, b]);
  assert.equal(sent, ["dialplan reload", "queue reload all"]);
});

test.run();
