// Time as the scheduler sees it, so tests can drive it with a fake clock instead of sleeping.

export interface TimerHandle {
  cancel(): void;
}

export interface Clock {
  /** Milliseconds on a monotonic scale. */
  now(): number;
  /** Runs `callback` after `ms` milliseconds unless cancelled. */
  setTimer(ms: number, callback: () => void): TimerHandle;
}

/** The real clock: performance.now() and setTimeout. */
export const systemClock: Clock = {
  now: () => performance.now(),
  setTimer(ms, callback) {
    const timer = setTimeout(callback, ms);
    return { cancel: () => clearTimeout(timer) };
  },
};
