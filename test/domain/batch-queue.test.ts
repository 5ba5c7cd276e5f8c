// The ingest's batching queue (src/domain/calls/batch-queue.ts): a batch starts when enough items wait
// or when the oldest has waited its delay on the injected timers, one batch at a time, in order.
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

test.run();
