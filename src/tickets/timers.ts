// The timer functions the ticket services use: the globals by default, a fake in tests so that
// the 8 s bot wait and the 30 s poll are driven, never slept through.

export interface Timers {
  setTimeout(callback: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

export const systemTimers: Timers = {
  setTimeout: (callback, ms) => {
    const handle = setTimeout(callback, ms);
    handle.unref?.();
    return handle;
  },
  clearTimeout: (handle) => clearTimeout(handle as NodeJS.Timeout),
};

export interface TicketLogger {
  info(object: object, message: string): void;
  error(object: object, message: string): void;
}

export const silentLogger: TicketLogger = { info() {}, error() {} };
