// The roles a replica runs only while it holds their lease (issue 23): the deployer of an engine,
// the call-event ingest of an engine connection, the ticket poller, the retention purge. Every
// replica keeps serving the API; a role's work starts when this replica takes its lease and stops
// when it loses it. Leases are rows in the store (src/store/lease-repository.ts) renewed every
// `renewEveryMs`; a replica that dies stops renewing and another takes the role once the lease
// has expired, i.e. within `ttlMs + renewEveryMs`. Wall time (lease expiry, compared by every
// replica) comes from the clock port and the waits from the timers port, so tests drive takeover
// without sleeping.
import { type Clock, systemClock, systemTimers, type TimerHandle, type Timers } from "../clock.js";
import type { Db } from "../store/database.js";
import { createLeaseRepository } from "../store/lease-repository.js";

/** Default lease lifetime: a dead holder's roles move within about 5 s. */
export const LEASE_TTL_MS = 4000;
/** Default renewal period: three renewals fit in a lease, so one slow one does not lose it. */
export const LEASE_RENEW_MS = 1000;

export interface Role {
  /** The lease's name, e.g. `deployer:<engine>`; shown in `/health`. */
  name: string;
  /** Starts the role's work (this replica just took the lease). */
  start(): void | Promise<void>;
  /** Stops it (the lease was lost or the replica is stopping); resolves once nothing runs. */
  stop(): void | Promise<void>;
}

export interface RolesLogger {
  info(object: object, message: string): void;
  error(object: object, message: string): void;
}

export interface ReplicaRolesOptions {
  db: Db;
  /** This replica's id: the lease holder it writes. */
  replicaId: string;
  clock?: Clock;
  timers?: Timers;
  ttlMs?: number;
  renewEveryMs?: number;
  logger?: RolesLogger;
}

/** This replica does not hold the role's lease in its current term any more (fencing). */
export class LeaseLostError extends Error {
  override readonly name = "LeaseLostError";
}

interface Held {
  role: Role;
  held: boolean;
  /** The lease's term from when it was taken until it was lost or released, else null. */
  epoch: number | null;
  /** The role's start/stop calls, one after the other. */
  changes: Promise<void>;
}

/** The leases of one replica's roles; nothing is taken until `start()`. */
export class ReplicaRoles {
  readonly replicaId: string;
  private readonly leases;
  private readonly clock: Clock;
  private readonly timers: Timers;
  private readonly ttlMs: number;
  private readonly renewEveryMs: number;
  private readonly roles = new Map<string, Held>();
  private timer: TimerHandle | null = null;
  private ticking: Promise<void> | null = null;
  private running = false;

  constructor(private readonly options: ReplicaRolesOptions) {
    this.replicaId = options.replicaId;
    this.leases = createLeaseRepository(options.db);
    this.clock = options.clock ?? systemClock;
    this.timers = options.timers ?? systemTimers;
    this.ttlMs = options.ttlMs ?? LEASE_TTL_MS;
    this.renewEveryMs = options.renewEveryMs ?? LEASE_RENEW_MS;
  }

  /** Adds a role (before or after `start()`; it is tried on the next tick). */
  add(role: Role): void {
    if (this.roles.has(role.name)) throw new Error(`role ${role.name} added twice`);
    this.roles.set(role.name, { role, held: false, epoch: null, changes: Promise.resolve() });
  }

  /**
   * Removes a role (an engine node removed or changed, issue 25): stopped if held (waiting for
   * it), its lease given up so no other replica waits for the expiry. Unknown names are ignored.
   */
  async remove(name: string): Promise<void> {
    const entry = this.roles.get(name);
    if (!entry) return;
    this.roles.delete(name);
    // A round in progress may still take or renew it: wait for it, then give up what it holds.
    await this.ticking;
    if (entry.held) this.change(entry, false);
    await entry.changes;
    if (entry.epoch === null) return;
    entry.epoch = null;
    await this.leases
      .release(name, this.replicaId)
      .catch((error: unknown) =>
        this.options.logger?.error({ err: error, role: name }, "lease not released"),
      );
  }

  /** The roles this replica holds now, by name. */
  held(): string[] {
    return [...this.roles.values()].filter((r) => r.held).map((r) => r.role.name);
  }

  holds(name: string): boolean {
    return this.roles.get(name)?.held ?? false;
  }

  /**
   * Fencing: resolves only if this replica still holds `name` in the term it took it in, and the
   * lease has not expired (checked in the store, by this replica's clock); otherwise throws
   * LeaseLostError. A holder that was paused past its expiry (a GC stall, a stopped process)
   * finds out here, before it acts, even if it has not noticed on a tick yet.
   */
  async assertHolds(name: string): Promise<void> {
    // The term, not `held`: a role stopping at shutdown still flushes its work (the pending
    // deploys of SIGTERM) under its lease, which is released only afterwards.
    const epoch = this.roles.get(name)?.epoch ?? null;
    if (epoch !== null && (await this.leases.holds(name, this.replicaId, epoch, this.clock()))) {
      return;
    }
    throw new LeaseLostError(`this replica no longer holds the ${name} lease`);
  }

  /** Resolves once every role's start or stop asked so far has finished. */
  async idle(): Promise<void> {
    await Promise.all([...this.roles.values()].map((entry) => entry.changes));
  }

  /** Tries every lease now and then every `renewEveryMs`; resolves after the first round. */
  async start(): Promise<void> {
    this.running = true;
    await this.tick();
  }

  /**
   * One round: takes or renews each role's lease, starting roles just taken and stopping roles
   * lost. A renewal the store did not answer counts as lost: a holder that cannot renew must
   * stop before its lease runs out under it, since another replica takes it then.
   */
  tick(): Promise<void> {
    this.ticking ??= this.round().finally(() => {
      this.ticking = null;
      this.scheduleNext();
    });
    return this.ticking;
  }

  /** Stops every role it holds (waiting for them), then gives their leases up. */
  async stop(): Promise<void> {
    this.running = false;
    this.timer?.cancel();
    this.timer = null;
    await this.ticking;
    for (const entry of this.roles.values()) {
      if (!entry.held) continue;
      this.change(entry, false);
      await entry.changes;
      entry.epoch = null;
      await this.leases
        .release(entry.role.name, this.replicaId)
        .catch((error: unknown) =>
          this.options.logger?.error({ err: error, role: entry.role.name }, "lease not released"),
        );
    }
  }

  private async round(): Promise<void> {
    if (!this.running) return;
    for (const entry of this.roles.values()) {
      let epoch: number | null;
      try {
        epoch = await this.leases.acquire(
          entry.role.name,
          this.replicaId,
          this.clock(),
          this.ttlMs,
        );
      } catch (error) {
        this.options.logger?.error({ err: error, role: entry.role.name }, "lease not renewed");
        epoch = null;
      }
      if (!this.running) return;
      const got = epoch !== null;
      // Retaken in a new term (this replica's own lease had expired under it): whatever ran in
      // the old term is fenced off, so the role starts again as a new holder would.
      if (got && entry.held && epoch !== entry.epoch) this.change(entry, false);
      entry.epoch = epoch;
      if (got !== entry.held) this.change(entry, got);
    }
  }

  private change(entry: Held, take: boolean): void {
    entry.held = take;
    const { role } = entry;
    this.options.logger?.info(
      { role: role.name, replica: this.replicaId },
      take ? "role taken" : "role given up",
    );
    entry.changes = entry.changes
      .then(() => (take ? role.start() : role.stop()))
      .catch((error: unknown) =>
        this.options.logger?.error(
          { err: error, role: role.name },
          take ? "role did not start" : "role did not stop",
        ),
      );
  }

  private scheduleNext(): void {
    if (!this.running) return;
    this.timer = this.timers.setTimer(this.renewEveryMs, () => void this.tick(), {
      background: true,
    });
  }
}
