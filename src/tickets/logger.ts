// The logger the ticket services write to (pino in the server, silent in tests). Their clock and
// timers are the one port of src/clock.ts.

export interface TicketLogger {
  info(object: object, message: string): void;
  error(object: object, message: string): void;
}

export const silentLogger: TicketLogger = { info() {}, error() {} };
