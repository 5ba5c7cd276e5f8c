// A queue that hands its items on in batches, in the order they came: a batch starts when
// `maxBatch` items wait, or when the oldest has waited `maxDelayMs`, whichever comes first, and
// one batch is handled at a time. The call-event ingest stores through it (src/api/
// call-tracking.ts): a transaction per batch instead of per event, with a bound on how long an
// event waits for its batch. The delay is measured with the timers port, so tests drive it.
import type { TimerHandle, Timers } from "../../clock.js";

export interface BatchQueueOptions<T> {
  timers: Timers;
  /** A batch starts at once when this many items wait; no batch is larger. */
  maxBatch: number;
  /** The longest an item waits before its batch starts (unless one is being handled). */
  maxDelayMs: number;
  /** Handles one batch; must not throw (it decides what a failure means). */
  handle(batch: T[]): Promise<void>;
}

export class BatchQueue<T> {
  private readonly waiting: { item: T; at: number }[] = [];
  private timer: TimerHandle | null = null;
  private running: Promise<void> | null = null;
  /** Callers of `flush` waiting: everything goes now, whatever its age. */
  private flushing = 0;

  constructor(private readonly options: BatchQueueOptions<T>) {}

  /** How many items wait for a batch (not counting the one being handled). */
  get size(): number {
    return this.waiting.length;
  }

  push(item: T): void {
    this.waiting.push({ item, at: this.options.timers.now() });
    this.schedule();
  }

  /** Hands on everything waiting now, without the delay; resolves once it is all handled. */
  async flush(): Promise<void> {
    this.flushing++;
    try {
      for (;;) {
        this.schedule();
        if (!this.running) return;
        await this.running;
      }
    } finally {
      this.flushing--;
    }
  }

  /** Whether a batch should start now rather than wait for more items. */
  private ready(): boolean {
    const oldest = this.waiting[0];
    if (!oldest) return false;
    return (
      this.waiting.length >= this.options.maxBatch ||
      this.flushing > 0 ||
      this.options.timers.now() - oldest.at >= this.options.maxDelayMs
    );
  }

  /** Starts a batch when one is due; otherwise makes sure the oldest item's time is watched. */
  private schedule(): void {
    if (this.running || this.waiting.length === 0) return;
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
        const batch = this.waiting.splice(0, this.options.maxBatch).map((entry) => entry.item);
        await this.options.handle(batch);
      } while (this.ready());
    } finally {
      this.running = null;
    }
    this.schedule();
  }
}
