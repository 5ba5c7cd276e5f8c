// Time, the one port for it: wall time (`Clock`, for timestamps, expiries and due dates) and
// waiting (`Timers`, a monotonic reading plus one-shot timers, for debounces, backoff and polls).
// Everything that reads the time or waits takes these as options, so tests drive time with a
// fake instead of sleeping. Like src/config.ts, it sits beside the layers for any of them.

/** Wall time; injected so tests need no sleep. */
export type Clock = () => Date;

export const systemClock: Clock = () => new Date();

export interface TimerHandle {
  cancel(): void;
}

export interface TimerOptions {
  /** The timer does not keep the process alive (a background poll); default false. */
  background?: boolean;
}

/** Waiting: what a debounce, a backoff or a poll loop needs. */
export interface Timers {
  /** Milliseconds on a monotonic scale (never jumps with the wall clock). */
  now(): number;
  /** Runs `callback` after `ms` milliseconds unless cancelled. */
  setTimer(ms: number, callback: () => void, options?: TimerOptions): TimerHandle;
}

/** The real timers: performance.now() and setTimeout. */
export const systemTimers: Timers = {
  now: () => performance.now(),
  setTimer(ms, callback, options = {}) {
    const timer = setTimeout(callback, ms);
    if (options.background) timer.unref();
    return { cancel: () => clearTimeout(timer) };
  },
};

/**
 * One pending background run at a time (a poll, a retry): arming an armed timer does nothing,
 * and the timer forgets itself before its task starts, so the task may arm it again.
 */
export class BackgroundTimer {
  private handle: TimerHandle | null = null;

  constructor(private readonly timers: Timers) {}

  get armed(): boolean {
    return this.handle !== null;
  }

  /** Runs `task` after `ms` milliseconds, unless a run is already pending. */
  arm(ms: number, task: () => unknown): void {
    if (this.handle) return;
    this.handle = this.timers.setTimer(
      ms,
      () => {
        this.handle = null;
        void task();
      },
      { background: true },
    );
  }

  cancel(): void {
    this.handle?.cancel();
    this.handle = null;
  }
}
