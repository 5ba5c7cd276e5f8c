// The ingest's batching queue (src/domain/calls/batch-queue.ts): a batch starts when enough items wait
// or when the oldest has waited its delay on the injected timers, one batch at a time, in order;
// a tail the handler hands back (the store is unavailable) is held in front, tried again after a
// doubling backoff, never beyond the cap, and a shutdown's one more try does not wait it out.
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { BatchQueue } from "../../src/domain/calls/batch-queue.js";
import { FakeClock } from "../deploy/helpers.js";

/** A queue whose batches are recorded; `release()` lets the batch being handled finish. */
function recordingQueue(maxBatch: number, maxDelayMs: number) {
  const timers = new FakeClock();
  const batches: number[][] = [];
  let release = () => {};
  let hold = false;
  const queue = new BatchQueue<number>({
    timers,
    maxBatch,
    maxDelayMs,
    async handle(batch) {
      batches.push(batch);
      if (hold) await new Promise<void>((resolve) => (release = resolve));
      return undefined;
    },
  });
  return {
    timers,
    batches,
    queue,
    holdBatches: () => {
      hold = true;
    },
    release: () => release(),
  };
}

const settle = () => new Promise((resolve) => setImmediate(resolve));

const test = suite("batch queue");

test("a batch starts as soon as maxBatch items wait, without waiting for the clock", async () => {
  const { queue, batches, timers } = recordingQueue(3, 20);
  queue.push(1);
  queue.push(2);
  await settle();
  assert.equal(batches, [], "two of three wait");
  queue.push(3);
  await settle();
  assert.equal(batches, [[1, 2, 3]]);
  assert.is(timers.now(), 0, "no time passed");
  assert.is(timers.pendingTimers, 0, "the delay's timer was cancelled");
});

test("fewer than maxBatch items go when the oldest has waited maxDelayMs on the clock", async () => {
  const { queue, batches, timers } = recordingQueue(100, 20);
  queue.push(1);
  timers.advance(5);
  queue.push(2);
  timers.advance(14);
  await settle();
  assert.equal(batches, [], "the oldest has waited 19 ms");
  timers.advance(1);
  await settle();
  assert.equal(batches, [[1, 2]], "20 ms after the first item");
  queue.push(3);
  timers.advance(19);
  await settle();
  assert.equal(batches.length, 1, "a new item starts a new wait");
  timers.advance(1);
  await settle();
  assert.equal(batches, [[1, 2], [3]]);
});

test("one batch at a time, in arrival order; what came meanwhile goes next", async () => {
  const { queue, batches, timers, holdBatches, release } = recordingQueue(2, 20);
  holdBatches();
  queue.push(1);
  queue.push(2);
  await settle();
  assert.equal(batches, [[1, 2]]);
  for (const item of [3, 4, 5]) queue.push(item);
  timers.advance(100);
  await settle();
  assert.equal(batches.length, 1, "no second batch while the first is handled");
  release();
  await settle();
  assert.equal(
    batches,
    [
      [1, 2],
      [3, 4],
    ],
    "a full batch, at once",
  );
  release();
  await settle();
  assert.equal(batches, [[1, 2], [3, 4], [5]], "5 has waited past its delay: it goes too");
  release();
  await settle();
  assert.is(queue.size, 0);
});

test("flush hands on everything waiting at once and resolves when it is handled", async () => {
  const { queue, batches, timers } = recordingQueue(2, 1000);
  for (const item of [1, 2, 3, 4, 5]) queue.push(item);
  await queue.flush();
  assert.equal(batches, [[1, 2], [3, 4], [5]]);
  assert.is(timers.now(), 0, "flush does not wait for the delay");
  await queue.flush();
  assert.is(batches.length, 3, "flushing an empty queue hands on nothing");
});

/**
 * A queue whose handler hands back every batch while `down` is set (and records each try), with
 * a backoff of 100 ms doubled up to 400 ms.
 */
function refusingQueue(
  options: { maxBatch?: number; maxHeld?: number; supersedes?: boolean } = {},
) {
  const timers = new FakeClock();
  const tries: { at: number; batch: number[] }[] = [];
  const taken: number[] = [];
  const dropped: { items: number[]; reason: string }[] = [];
  const state = { down: true };
  const queue = new BatchQueue<number>({
    timers,
    maxBatch: options.maxBatch ?? 3,
    maxDelayMs: 10,
    backoffMs: { first: 100, max: 400 },
    ...(options.maxHeld !== undefined ? { maxHeld: options.maxHeld } : {}),
    ...(options.supersedes ? { supersedes: true } : {}),
    async handle(batch) {
      tries.push({ at: timers.now(), batch });
      if (state.down) return batch;
      taken.push(...batch);
      return [];
    },
    onDropped: (items, reason) => dropped.push({ items, reason }),
  });
  return { timers, tries, taken, dropped, state, queue };
}

test("a handed-back batch is held in front, tried after a doubling backoff, with newer items behind it", async () => {
  const { queue, timers, tries, taken, state } = refusingQueue();
  for (const item of [1, 2, 3]) queue.push(item);
  await settle();
  assert.equal(tries, [{ at: 0, batch: [1, 2, 3] }]);
  assert.ok(queue.holding);
  for (const item of [4, 5, 6, 7]) queue.push(item);
  await settle();
  assert.is(tries.length, 1, "a full batch waiting does not cut the backoff short");
  assert.is(queue.size, 7, "held and new, together");
  timers.advance(99);
  await settle();
  assert.is(tries.length, 1);
  timers.advance(1);
  await settle();
  assert.equal(tries[1], { at: 100, batch: [1, 2, 3] }, "the same batch again, first");
  for (const wait of [200, 400, 400]) {
    timers.advance(wait - 1);
    await settle();
    const before = tries.length;
    timers.advance(1);
    await settle();
    assert.is(tries.length, before + 1, `tried again after ${wait} ms`);
  }
  state.down = false;
  timers.advance(400);
  await settle();
  assert.equal(taken, [1, 2, 3, 4, 5, 6, 7], "each once, in order, at once when it works again");
  assert.not.ok(queue.holding);
  assert.is(queue.size, 0);
});

test("only the tail handed back is held: the part taken is not handed on again", async () => {
  const timers = new FakeClock();
  const batches: number[][] = [];
  let refuse = true;
  const queue = new BatchQueue<number>({
    timers,
    maxBatch: 4,
    maxDelayMs: 10,
    backoffMs: { first: 50, max: 50 },
    async handle(batch) {
      batches.push(batch);
      if (!refuse) return [];
      refuse = false;
      return batch.slice(2);
    },
  });
  for (const item of [1, 2, 3, 4, 5]) queue.push(item);
  await settle();
  timers.advance(50);
  await queue.flush();
  assert.equal(batches, [
    [1, 2, 3, 4],
    [3, 4, 5],
  ]);
});

test("beyond maxHeld the oldest go, reported; flush waits out the backoff until all is taken", async () => {
  const { queue, timers, taken, dropped, state } = refusingQueue({ maxHeld: 5 });
  for (let item = 1; item <= 3; item++) queue.push(item);
  await settle();
  for (let item = 4; item <= 8; item++) queue.push(item);
  assert.equal(dropped, [
    { items: [1], reason: "overflow" },
    { items: [2], reason: "overflow" },
    { items: [3], reason: "overflow" },
  ]);
  assert.is(queue.size, 5);
  let flushed = false;
  const flushing = queue.flush().then(() => {
    flushed = true;
  });
  await settle();
  assert.not.ok(flushed, "flush does not return while items are held");
  state.down = false;
  timers.advance(100);
  await flushing;
  assert.equal(taken, [4, 5, 6, 7, 8]);
});

test("tryNow tries what is held at once, once, and says how many are left; close lets them go", async () => {
  const { queue, timers, tries, dropped } = refusingQueue({ maxBatch: 2 });
  for (const item of [1, 2, 3]) queue.push(item);
  await settle();
  assert.is(tries.length, 1);
  assert.is(await queue.tryNow(), 3, "refused again: all three left");
  assert.is(tries.length, 2, "one more try, without waiting for the backoff");
  assert.is(timers.now(), 0);
  queue.close();
  assert.equal(dropped, [{ items: [1, 2, 3], reason: "closed" }]);
  timers.advance(10_000);
  await settle();
  assert.is(tries.length, 2, "nothing is tried after close");
  queue.push(4);
  assert.equal(dropped.at(-1), { items: [4], reason: "closed" });
});

test("tryNow hands everything on when the handler takes it", async () => {
  const { queue, timers, taken, state } = refusingQueue({ maxBatch: 2 });
  for (const item of [1, 2, 3]) queue.push(item);
  await settle();
  state.down = false;
  assert.is(await queue.tryNow(), 0);
  assert.equal(taken, [1, 2, 3]);
  assert.is(timers.pendingTimers, 0, "the backoff's timer was cancelled");
});

test("whole states (supersedes): while held only the newest is kept, none reported dropped; handed on each when not held", async () => {
  const { queue, timers, tries, taken, dropped, state } = refusingQueue({
    maxBatch: 1,
    supersedes: true,
  });
  queue.push(1);
  await settle();
  assert.equal(tries, [{ at: 0, batch: [1] }]);
  for (const item of [2, 3, 4]) queue.push(item);
  assert.is(queue.size, 1, "the held state and the newer ones collapse to the newest");
  state.down = false;
  timers.advance(100);
  await queue.flush();
  assert.equal(taken, [4], "only the newest state is stored after the outage");
  assert.equal(dropped, [], "a superseded state is not a loss");
  for (const item of [5, 6]) queue.push(item);
  await queue.flush();
  assert.equal(taken, [4, 5, 6], "not held: every state is handed on, in order");
});

test("whole states: a state arriving while a held one is being tried again replaces it if that try fails", async () => {
  const timers = new FakeClock();
  const tries: number[][] = [];
  let release = () => {};
  const queue = new BatchQueue<number>({
    timers,
    maxBatch: 1,
    maxDelayMs: 0,
    backoffMs: { first: 100, max: 100 },
    supersedes: true,
    async handle(batch) {
      tries.push(batch);
      await new Promise<void>((resolve) => (release = resolve));
      return batch;
    },
  });
  queue.push(1);
  await settle();
  queue.push(2);
  assert.is(queue.size, 1, "not held yet: the newer one waits behind");
  release();
  await settle();
  assert.is(queue.size, 1, "the refused older state was let go for the newer one");
  timers.advance(100);
  await settle();
  assert.equal(tries, [[1], [2]]);
  queue.close();
  release();
});

test.run();
