// What the measuring parts of the server report, as narrow interfaces: the deployer's reload
// queue, the deploy scheduler, the AMI connection, call ingest, the webhook and ticket outboxes,
// the intake and the retention purge take one of these (default: `noInstruments`), so none of
// them imports prom-client and their tests need no registry. src/metrics/registry.ts implements
// them over one prom-client registry per app. Every label value passed here comes from a fixed
// set (a module name, an AMI action, a result class): never an org id, a number or a URL.

/** How one outbound attempt (webhook, ticket message, intake POST) ended. */
export type AttemptResult = "2xx" | "3xx" | "4xx" | "5xx" | "timeout" | "refused" | "error";

/** The result class of an HTTP status, or of no answer (`error`). */
export function attemptResultOf(status: number | null): AttemptResult {
  if (status === null || status < 200 || status >= 600) return "error";
  return `${Math.floor(status / 100)}xx` as AttemptResult;
}

/** The result class of a send that got no answer: a timeout, else an error. */
export function failedAttemptResult(error: unknown): AttemptResult {
  const name = (error as { name?: unknown })?.name;
  const message = error instanceof Error ? error.message : String(error);
  return name === "TimeoutError" || /timed? ?out/i.test(message) ? "timeout" : "error";
}

export interface HttpInstruments {
  /** A request came in (the in-flight gauge). */
  started(): void;
  /**
   * It was answered: `route` is the route template (`/api/v1/users/:id`) or a fixed name for
   * what no route matched, never the URL.
   */
  finished(route: string, method: string, status: number, seconds: number): void;
}

export interface ReloadInstruments {
  /** One reload command sent to the engine (each retry too), by engine module. */
  commandSent(module: string): void;
  /** One queued reload finished (after its retries), with how long it took in all. */
  reloaded(module: string, result: "ok" | "failed" | "skipped", seconds: number): void;
}

export interface DeployInstruments {
  /** An org's background deploy went live, `seconds` after the first save it carries. */
  applied(seconds: number): void;
  /** A background deploy failed (it will be retried). */
  failed(): void;
  /** A failed deploy is being tried again. */
  retried(): void;
}

export interface AmiInstruments {
  /** The session logged in (true) or dropped (false). */
  connected(up: boolean): void;
  /** A login after an earlier one of the same connection. */
  reconnected(): void;
  /** An action the engine refused (`Response: Error`) or that got no answer, by AMI action. */
  commandError(action: string): void;
}

export interface CallIngestInstruments {
  /**
   * One input from the engine was handled: `result` says whether it was stored; `lagSeconds`
   * is the time from the engine's event time to its storing (null when the event has none).
   */
  ingested(
    kind: "record" | "event",
    result: "stored" | "duplicate" | "no_org",
    lagSeconds: number | null,
  ): void;
  /**
   * Inputs let go unstored: one the store rejected (`rejected`), the oldest held beyond the cap
   * while the store is unavailable (`overflow`), or still held when the ingest stopped (`shutdown`).
   */
  dropped(reason: "rejected" | "overflow" | "shutdown", count: number): void;
  /** The ingest started (true) or stopped (false) holding its events for an unavailable store. */
  storeUnavailable(holding: boolean): void;
  /**
   * Registration changes let go unstored (src/api/registration-storing.ts), by kind (`contact`:
   * a phone's contact; `trunks`: a list of the trunks' registrations) and the reasons above.
   */
  registrationsDropped(
    kind: "contact" | "trunks",
    reason: "rejected" | "overflow" | "shutdown",
    count: number,
  ): void;
}

export interface OutboxInstruments {
  /** One attempt ended; `deliveredAfterSeconds` (from the row's creation) when it delivered. */
  attempt(result: AttemptResult, deliveredAfterSeconds: number | null): void;
}

export interface WebhookInstruments extends OutboxInstruments {
  /** An endpoint was deactivated (410 Gone, or too many failed deliveries). */
  endpointDisabled(reason: string): void;
}

export interface TicketInstruments {
  /** A ticket was opened (a repeat caller's raised ticket is not a new one). */
  opened(source: string): void;
}

export interface RetentionInstruments {
  /** Rows (or files) the purge deleted, by retention kind. */
  purged(kind: string, count: number): void;
}

/** Every instrument, as the server hands them out. */
export interface Instruments {
  http: HttpInstruments;
  reloads: ReloadInstruments;
  deploys: DeployInstruments;
  /** One per AMI connection (`deploy`, `events`). */
  ami(connection: "deploy" | "events"): AmiInstruments;
  calls: CallIngestInstruments;
  webhooks: WebhookInstruments;
  ticketMessages: OutboxInstruments;
  intakePosts: OutboxInstruments;
  tickets: TicketInstruments;
  retention: RetentionInstruments;
}

const nothing = (): void => {};

const noOutbox: OutboxInstruments = { attempt: nothing };
const noAmi: AmiInstruments = { connected: nothing, reconnected: nothing, commandError: nothing };

/** Instruments that measure nothing: the default of every measuring part. */
export const noInstruments: Instruments = {
  http: { started: nothing, finished: nothing },
  reloads: { commandSent: nothing, reloaded: nothing },
  deploys: { applied: nothing, failed: nothing, retried: nothing },
  ami: () => noAmi,
  calls: {
    ingested: nothing,
    dropped: nothing,
    storeUnavailable: nothing,
    registrationsDropped: nothing,
  },
  webhooks: { attempt: nothing, endpointDisabled: nothing },
  ticketMessages: noOutbox,
  intakePosts: noOutbox,
  tickets: { opened: nothing },
  retention: { purged: nothing },
};
