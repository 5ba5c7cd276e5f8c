// The daily retention purge of the server process (issue 16): every org with a policy is purged
// once a day. The clock is injected and `tick()` is public, so tests run a day in one call
// instead of waiting; the timer only asks `tick()` every hour whether a day has passed.
import { randomUUID } from "node:crypto";
import type { Logger } from "pino";
import { type Clock, systemTimers, type TimerHandle, type Timers } from "../../clock.js";
import { noInstruments, type RetentionInstruments } from "../../metrics/instruments.js";
import { expireIdempotencyKeys } from "../idempotency.js";
import { auditPurge, type PurgeContext, type PurgeReport, purgeAll } from "./retention.js";

const HOUR_MS = 60 * 60 * 1000;
const DAY_MS = 24 * HOUR_MS;

export interface RetentionScheduler {
  /** Purges every org when a day has passed since the last run (or none ran); null otherwise. */
  tick(): Promise<PurgeReport[] | null>;
  stop(): Promise<void>;
}

/** Starts the hourly check (the first purge runs at once); `tick` is the whole behaviour. */
export function startRetentionScheduler(options: {
  context: PurgeContext;
  clock: Clock;
  /** Waits between checks; default the real timers. */
  timers?: Timers;
  logger?: Logger;
  /** false: no timer, tests call tick(). */
  timer?: boolean;
  /** Rows purged by kind (src/metrics). */
  instruments?: RetentionInstruments;
}): RetentionScheduler {
  const measure = options.instruments ?? noInstruments.retention;
  let lastRun: number | null = null;
  let running: Promise<PurgeReport[] | null> | null = null;
  const tick = async (): Promise<PurgeReport[] | null> => {
    const now = options.clock();
    if (lastRun !== null && now.getTime() - lastRun < DAY_MS) return null;
    lastRun = now.getTime();
    const reports = await purgeAll(options.context, now, false);
    // Not a retention kind (no org chooses it): Idempotency-Keys expire after a day everywhere.
    const expiredKeys = await expireIdempotencyKeys(options.context.db, now);
    if (expiredKeys > 0) options.logger?.info({ expired: expiredKeys }, "idempotency keys expired");
    const runId = randomUUID();
    for (const report of reports) {
      await auditPurge(
        options.context.db,
        now,
        report,
        { kind: "system", id: null },
        "scheduled retention purge",
        runId,
      );
      const deleted = Object.fromEntries(
        Object.entries(report.kinds).map(([kind, k]) => [kind, k.deleted]),
      );
      for (const [kind, k] of Object.entries(report.kinds)) {
        if (k.deleted > 0) measure.purged(kind, k.deleted);
      }
      options.logger?.info({ org_id: report.org_id, deleted }, "retention purge");
    }
    return reports;
  };
  const guarded = () => {
    running ??= tick()
      .catch((error: unknown) => {
        options.logger?.error({ err: error }, "retention purge failed");
        return null;
      })
      .finally(() => {
        running = null;
      });
    return running;
  };
  const timers = options.timers ?? systemTimers;
  let timer: TimerHandle | null = null;
  let stopped = false;
  const every = () => {
    if (stopped) return;
    void guarded();
    timer = timers.setTimer(HOUR_MS, every, { background: true });
  };
  if (options.timer !== false) every();
  return {
    tick: guarded,
    async stop() {
      stopped = true;
      timer?.cancel();
      await running;
    },
  };
}
