// A queue that hands its items on in batches, in the order they came: a batch starts when
// `maxBatch` items wait, or when the oldest has waited `maxDelayMs`, whichever comes first, and
// one batch is handled at a time. The call-event ingest stores through it (src/api/
// call-tracking.ts): a transaction per batch instead of per event, with a bound on how long an
// event waits for its batch. The delay is measured with the timers port, so tests drive it.
//
// A handler that cannot take its batch now (the store is unavailable) hands back what it did not
// take, a tail of the batch: those items go back to the front, in order, and the next batch
// starts only after a backoff that doubles with each failed try, while new items queue behind.
// So an outage holds items instead of losing them, and they are handed on in their order once
// the handler takes them again. What is held is bounded: beyond `maxHeld` items the oldest are
// let go, and the owner is told. Items that are each a whole state (`supersedes`) bound
// themselves instead: while held, only the newest is kept.
import { BackgroundTimer, type TimerHandle, type Timers } from "../../clock.js";

export interface BatchQueueOptions<T> {
  timers: Timers;
  /** A batch starts at once when this many items wait; no batch is larger. */
  maxBatch: number;
  /** The longest an item waits before its batch starts (unless one is being handled). */
  maxDelayMs: number;
  /**
   * Handles one batch; must not throw (it decides what a failure means). Resolves with the items
   * it could not take now, a tail of `batch` in its order (nothing, or empty: all taken): they
   * are handed on again, first, after the backoff.
   */
  handle(batch: T[]): Promise<T[] | undefined>;
  /** The wait before the first try again, doubled per failed try up to `max` (default 200 ms, 10 s). */
  backoffMs?: { first: number; max: number };
  /** The most items kept waiting, held ones included (default: no bound). */
  maxHeld?: number;
  /**
   * Each item is a whole state that makes the items before it redundant (default false): while
   * items are held (the last batch was handed back), a new one replaces all that wait, and a
   * handed-back tail with newer items behind it is let go silently (not reported as dropped).
   */
  supersedes?: boolean;
  /** Items let go: the oldest beyond `maxHeld`, or what was still held when the queue closed. */
  onDropped?(items: T[], reason: "overflow" | "closed"): void;
}

interface Waiting<T> {
  item: T;
  at: number;
}

export class BatchQueue<T> {
  private readonly waiting: Waiting<T>[] = [];
  private timer: TimerHandle | null = null;
  private readonly retry: BackgroundTimer;
  private running: Promise<void> | null = null;
  /** Callers of `flush` waiting: everything goes now, whatever its age. */
  private flushing = 0;
  /** Failed tries in a row (0: the handler took the last batch). */
  private failures = 0;
  /** Resolves the callers of `flush` waiting out a backoff when the next try starts. */
  private retried: { promise: Promise<void>; resolve: () => void } | null = null;
  private closed = false;

  constructor(private readonly options: BatchQueueOptions<T>) {
    this.retry = new BackgroundTimer(options.timers);
  }

  /** How many items wait for a batch (not counting the one being handled), held ones included. */
  get size(): number {
    return this.waiting.length;
  }

  /** Whether the last batch was handed back (items are held until the handler takes them). */
  get holding(): boolean {
    return this.failures > 0;
  }

  push(item: T): void {
    if (this.closed) {
      this.options.onDropped?.([item], "closed");
      return;
    }
    // While held, the newest whole state replaces what waits: held memory stays one item.
    if (this.options.supersedes && this.failures > 0) this.waiting.splice(0);
    this.waiting.push({ item, at: this.options.timers.now() });
    this.bound();
    this.schedule();
  }

  /**
   * Hands on everything waiting now, without the delay; resolves once it is all handled. Items
   * handed back are waited for through their backoff: while the handler refuses, this waits.
   */
  async flush(): Promise<void> {
    this.flushing++;
    try {
      for (;;) {
        this.schedule();
        if (this.running) await this.running;
        else if (this.retry.armed) await this.retriedPromise();
        else return;
      }
    } finally {
      this.flushing--;
    }
  }

  /**
   * Hands on everything now, held items too without waiting out their backoff, and resolves once
   * it is all handled or as soon as a batch is handed back, with how many items are then left
   * (they are tried again after the backoff, as before). Bounded where `flush` is not: for a
   * shutdown or a hand-over that must not wait for an outage to end.
   */
  async tryNow(): Promise<number> {
    if (this.running) await this.running;
    if (this.retry.armed) {
      this.retry.cancel();
      this.wakeRetried();
    }
    this.flushing++;
    try {
      for (;;) {
        const failuresBefore = this.failures;
        this.schedule();
        if (!this.running) break;
        await this.running;
        if (this.failures > failuresBefore) break;
      }
    } finally {
      this.flushing--;
    }
    return this.waiting.length;
  }

  /**
   * Stops the queue: nothing is handed on any more, and what waits (or is handed back later by a
   * batch still being handled) is let go, reported to `onDropped` as `closed`.
   */
  close(): void {
    this.closed = true;
    this.timer?.cancel();
    this.timer = null;
    this.retry.cancel();
    this.wakeRetried();
    const left = this.waiting.splice(0).map((entry) => entry.item);
    if (left.length > 0) this.options.onDropped?.(left, "closed");
  }

  /** Lets the oldest items go while more than `maxHeld` wait. */
  private bound(): void {
    const excess = this.waiting.length - (this.options.maxHeld ?? Number.POSITIVE_INFINITY);
    if (excess <= 0) return;
    const dropped = this.waiting.splice(0, excess).map((entry) => entry.item);
    this.options.onDropped?.(dropped, "overflow");
  }

  /** Whether a batch should start now rather than wait for more items (or for the backoff). */
  private ready(): boolean {
    const oldest = this.waiting[0];
    if (!oldest || this.closed || this.retry.armed) return false;
    return (
      this.waiting.length >= this.options.maxBatch ||
      this.flushing > 0 ||
      this.failures > 0 ||
      this.options.timers.now() - oldest.at >= this.options.maxDelayMs
    );
  }

  /** Starts a batch when one is due; otherwise makes sure the oldest item's time is watched. */
  private schedule(): void {
    if (this.running || this.waiting.length === 0 || this.closed || this.retry.armed) return;
    if (this.ready()) {
      this.timer?.cancel();
      this.timer = null;
      this.running = this.run();
      return;
    }
    const due = this.waiting[0]!.at + this.options.maxDelayMs - this.options.timers.now();
    this.timer ??= this.options.timers.setTimer(due, () => {
      this.timer = null;
      this.schedule();
    });
  }

  /** Handles batches while they are due (items that came meanwhile may make the next one due). */
  private async run(): Promise<void> {
    try {
      do {
        const taken = this.waiting.splice(0, this.options.maxBatch);
        const left = await this.options.handle(taken.map((entry) => entry.item));
        if (left && left.length > 0) {
          this.handedBack(taken.slice(taken.length - left.length));
          break;
        }
        this.failures = 0;
      } while (this.ready());
    } finally {
      this.running = null;
    }
    this.schedule();
  }

  /** Puts a handed-back tail in front of what came meanwhile and waits out the backoff. */
  private handedBack(tail: Waiting<T>[]): void {
    if (this.closed) {
      this.options.onDropped?.(
        tail.map((entry) => entry.item),
        "closed",
      );
      return;
    }
    if (!(this.options.supersedes && this.waiting.length > 0)) this.waiting.unshift(...tail);
    this.bound();
    this.failures++;
    const { first, max } = this.options.backoffMs ?? { first: 200, max: 10_000 };
    const wait = Math.min(max, first * 2 ** Math.min(this.failures - 1, 30));
    this.retry.arm(wait, () => {
      this.wakeRetried();
      this.schedule();
    });
  }

  private retriedPromise(): Promise<void> {
    if (!this.retried) {
      let resolve = () => {};
      const promise = new Promise<void>((r) => {
        resolve = r;
      });
      this.retried = { promise, resolve };
    }
    return this.retried.promise;
  }

  private wakeRetried(): void {
    const waiting = this.retried;
    this.retried = null;
    waiting?.resolve();
  }
}
