// How a replica on PostgreSQL knows that its cached reads are still current (issue 23). Other
// replicas commit without this process seeing it, so the store generation that cached reads are
// keyed on (src/store/read-cache.ts) is built from what PostgreSQL tells it:
// - a commit that changed a table cached reads read fires its statement-level trigger, which
//   notifies `pbx_store_changes` (migration 2960); this feed LISTENs on one dedicated
//   connection and counts each notification;
// - this process's own commits count at once (the driver reports them, database-postgres.ts), so
//   a request that just wrote reads its write even before the notification is back;
// - the feed is trusted only while it is proven alive: every `heartbeatMs` it notifies itself on
//   a channel of its own. PostgreSQL delivers notifications in commit order, so when that ping
//   comes back, every change committed before the ping was sent has been counted. A generation is
//   given only while the last proven ping was sent less than `staleAfterMs` ago: a cached read is
//   never older than that, whatever happens to the connection.
// While the connection is down, reconnecting, or not yet proven, the generation is null and
// nothing is cached: reads go to the database. Each new connection starts a new epoch, so nothing
// cached before a gap (whose notifications are lost) is ever reused after it.
import { randomBytes } from "node:crypto";
import type pg from "pg";
import { systemTimers, type TimerHandle, type Timers } from "../clock.js";
import { packageOnFirstUse } from "../lazy-package.js";

// Loaded when a PostgreSQL store first follows its changes: a SQLite store never needs it.
const pgDriver = packageOnFirstUse<typeof pg>("pg");

/** The channel migration 2960's triggers notify. */
export const CHANGES_CHANNEL = "pbx_store_changes";

/**
 * The tables cached reads read, each with migration 2960's trigger. A cached read of any other
 * table would miss other replicas' changes: add the table's trigger in a migration first.
 */
export const CACHED_TABLES: readonly string[] = ["organizations", "api_keys", "users"];

/** How often the feed proves itself alive. */
export const CHANGE_FEED_HEARTBEAT_MS = 250;
/** How old the last proof may be before cached reads stop: the bound on a cached read's age. */
export const CHANGE_FEED_STALE_AFTER_MS = 750;
/** A ping unanswered this long means the connection is dead even if the socket looks open. */
const PING_TIMEOUT_MS = 5000;
/** Wait between reconnection attempts. */
const RECONNECT_MS = 1000;

export interface StoreChangeFeedOptions {
  /** The connection settings of the store's pool (the feed opens its own connection). */
  connection: pg.ClientConfig;
  timers?: Timers;
  heartbeatMs?: number;
  staleAfterMs?: number;
  reconnectMs?: number;
  /** A connection that failed or was lost (the feed reconnects by itself). */
  onError?: (error: unknown) => void;
}

/** The generation of one PostgreSQL store handle, from a dedicated LISTEN connection. */
export class StoreChangeFeed {
  private readonly timers: Timers;
  private readonly heartbeatMs: number;
  private readonly staleAfterMs: number;
  private readonly reconnectMs: number;
  private readonly pingChannel = `pbx_store_ping_${randomBytes(8).toString("hex")}`;
  private client: pg.Client | null = null;
  private epoch = 0;
  private changes = 0;
  /** When (monotonic ms) the last ping that came back was sent; null: not proven. */
  private provenAt: number | null = null;
  private pingSeq = 0;
  /** The ping in flight: its number and when it was sent. */
  private inFlight: { seq: number; sentAt: number } | null = null;
  private running = false;
  private timer: TimerHandle | null = null;
  private connecting: Promise<void> | null = null;
  private waiters: Array<() => void> = [];
  private onError: (error: unknown) => void;
  /** Callers waiting for the current connection's first proof (or its loss). */
  private proofWaiters: Array<() => void> = [];

  constructor(private readonly options: StoreChangeFeedOptions) {
    this.timers = options.timers ?? systemTimers;
    this.heartbeatMs = options.heartbeatMs ?? CHANGE_FEED_HEARTBEAT_MS;
    this.staleAfterMs = options.staleAfterMs ?? CHANGE_FEED_STALE_AFTER_MS;
    this.reconnectMs = options.reconnectMs ?? RECONNECT_MS;
    this.onError = options.onError ?? (() => {});
  }

  /**
   * A value that changes with every change to a cached table, or null while changes cannot be
   * known (not started, connection down, last proof too old): then nothing may be cached.
   */
  generation(): string | null {
    if (this.client === null || this.provenAt === null) return null;
    if (this.timers.now() - this.provenAt > this.staleAfterMs) return null;
    return `${this.epoch}:${this.changes}`;
  }

  /** This process committed a change to a cached table. */
  noteOwnChange(): void {
    this.changeSeen();
  }

  /** Whether the feed is connected and proven now (cached reads are in use). */
  get following(): boolean {
    return this.generation() !== null;
  }

  /** Resolves at the next change counted (a notification or an own commit): for tests. */
  nextChange(): Promise<void> {
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  /**
   * Resolves once every change committed before this call has been counted: when a ping sent
   * after it comes back (notifications arrive in commit order). At once when stopped.
   */
  async caughtUp(): Promise<void> {
    const since = this.timers.now();
    while (this.running && (this.provenAt === null || this.provenAt < since)) {
      await new Promise<void>((resolve) => this.proofWaiters.push(resolve));
    }
  }

  /** Resolves once the feed follows (a proof fresh enough); at once when stopped. */
  async whenFollowing(): Promise<void> {
    while (this.running && this.generation() === null) {
      await new Promise<void>((resolve) => this.proofWaiters.push(resolve));
    }
  }

  /**
   * Opens the LISTEN connection and resolves once it has been proven by a first ping, or the
   * attempt failed (the feed keeps retrying in the background; until then nothing is cached).
   * `onError` hears of every failed or lost connection.
   */
  async start(onError?: (error: unknown) => void): Promise<void> {
    if (onError) this.onError = onError;
    if (this.running) return this.connecting ?? undefined;
    this.running = true;
    await this.connect();
    if (this.client) await this.proven();
  }

  /** Closes the connection; the generation is null from now on. */
  async stop(): Promise<void> {
    this.running = false;
    this.timer?.cancel();
    this.timer = null;
    await this.connecting;
    const client = this.client;
    this.drop();
    await client?.end().catch(() => {});
  }

  /** The database process id of the LISTEN connection (tests end it to prove recovery). */
  async backendPid(): Promise<number | null> {
    const client = this.client;
    if (!client) return null;
    const result = await client.query<{ pid: number }>("SELECT pg_backend_pid() AS pid");
    return result.rows[0]?.pid ?? null;
  }

  private connect(): Promise<void> {
    this.connecting ??= this.open().finally(() => {
      this.connecting = null;
    });
    return this.connecting;
  }

  private async open(): Promise<void> {
    const client = new (pgDriver().Client)({ ...this.options.connection, keepAlive: true });
    client.on("notification", (message) => this.received(client, message));
    client.on("error", (error) => this.lost(client, error));
    client.on("end", () => this.lost(client, new Error("change feed connection ended")));
    try {
      await client.connect();
      // Both names are ours (a constant and random hex), never user input.
      await client.query(`LISTEN ${CHANGES_CHANNEL}`);
      await client.query(`LISTEN ${this.pingChannel}`);
    } catch (error) {
      this.onError(error);
      await client.end().catch(() => {});
      this.scheduleReconnect();
      return;
    }
    if (!this.running) {
      await client.end().catch(() => {});
      return;
    }
    this.client = client;
    // Whatever was cached under an earlier connection is never reused: its gap is unknown.
    this.epoch++;
    this.heartbeat();
  }

  /** Resolves once the current connection's first ping came back (or the connection is gone). */
  private proven(): Promise<void> {
    if (this.client === null || this.provenAt !== null) return Promise.resolve();
    return new Promise((resolve) => this.proofWaiters.push(resolve));
  }

  private settleProofWaiters(): void {
    const waiters = this.proofWaiters;
    this.proofWaiters = [];
    for (const resolve of waiters) resolve();
  }

  private heartbeat(): void {
    this.timer = null;
    if (!this.running || !this.client) return;
    this.ping(this.client);
    this.timer = this.timers.setTimer(this.heartbeatMs, () => this.heartbeat(), {
      background: true,
    });
  }

  private ping(client: pg.Client): void {
    const now = this.timers.now();
    if (this.inFlight) {
      if (now - this.inFlight.sentAt < PING_TIMEOUT_MS) return;
      // Unanswered for seconds: a half-open connection. Drop it and start again.
      this.lost(client, new Error("change feed ping unanswered"));
      return;
    }
    const seq = ++this.pingSeq;
    this.inFlight = { seq, sentAt: now };
    client
      .query("SELECT pg_notify($1, $2)", [this.pingChannel, String(seq)])
      .catch((error: unknown) => this.lost(client, error));
  }

  private received(client: pg.Client, message: pg.Notification): void {
    if (client !== this.client) return;
    if (message.channel === CHANGES_CHANNEL) {
      this.changeSeen();
      return;
    }
    if (message.channel === this.pingChannel && this.inFlight?.seq === Number(message.payload)) {
      this.provenAt = this.inFlight.sentAt;
      this.inFlight = null;
      this.settleProofWaiters();
    }
  }

  private changeSeen(): void {
    this.changes++;
    const waiters = this.waiters;
    this.waiters = [];
    for (const resolve of waiters) resolve();
  }

  private lost(client: pg.Client, error: unknown): void {
    if (client !== this.client) return;
    this.drop();
    if (!this.running) return;
    this.onError(error);
    client.end().catch(() => {});
    this.scheduleReconnect();
  }

  /** Forgets the connection: the generation is null until a new one is proven. */
  private drop(): void {
    this.client = null;
    this.provenAt = null;
    this.inFlight = null;
    this.timer?.cancel();
    this.timer = null;
    this.settleProofWaiters();
  }

  private scheduleReconnect(): void {
    if (!this.running) return;
    this.timer = this.timers.setTimer(
      this.reconnectMs,
      () => {
        this.timer = null;
        void this.connect();
      },
      { background: true },
    );
  }
}

/**
 * Whether a statement this process runs changes a table cached reads read: anything but a query
 * builder SELECT whose text names one (Kysely quotes identifiers: `"users"`, never `org_users`);
 * raw SQL only when it also writes. A false positive only costs cache hits.
 */
export function changesCachedTable(query: { kind: string }, text: string): boolean {
  if (query.kind === "SelectQueryNode") return false;
  if (!CACHED_TABLE_PATTERN.test(text)) return false;
  return query.kind !== "RawNode" || WRITE_PATTERN.test(text);
}

const CACHED_TABLE_PATTERN = new RegExp(`\\b(${CACHED_TABLES.join("|")})\\b`, "i");
const WRITE_PATTERN = /\b(insert|update|delete|truncate|merge)\b/i;
