// What is live, per unit: the revision the engine last loaded beside the last deploy (and, when
// the caller can compile, the desired revision), so "saved but not live" never hides.
import type { AppliedRevision, DeployLog, DeployRecord } from "./deploy-log.js";
import { type DriftedFile, type DriftOptions, unitDrift } from "./drift.js";

export interface UnitStatus {
  unit: string;
  /** What the configuration compiles to now, when the caller knows it. */
  desiredRevision: string | null;
  /** What the engine last loaded successfully. */
  appliedRevision: string | null;
  appliedAt: string | null;
  lastDeploy: {
    at: string;
    result: DeployRecord["result"];
    trigger: string;
    revision: string;
    reloads: string[];
    /** For a rollback: the kept version it put back. */
    restored?: DeployRecord["restored"];
    error?: string;
  } | null;
  health: DeployRecord["health"] | null;
  /** True when the desired (or last deployed) revision is not the applied one. */
  pending: boolean;
  /** Files on disk that differ from what the applied revision recorded (empty: no drift). */
  drifted: DriftedFile[];
}

export interface StatusOptions extends DriftOptions {
  /** The engine directory to check for drift; without it no file is read. */
  engineDir?: string;
}

/**
 * One status per unit known to the log (or named in `desired`), sorted by unit id. `desired`
 * maps unit ids to the revision the current configuration compiles to; with `engineDir`, each
 * applied unit's files are checked for drift.
 */
export async function unitStatuses(
  log: DeployLog,
  desired: ReadonlyMap<string, string> = new Map(),
  options: StatusOptions = {},
): Promise<UnitStatus[]> {
  const applied = new Map<string, AppliedRevision>(
    (await log.allApplied()).map((entry) => [entry.unit, entry]),
  );
  const last = new Map<string, DeployRecord>();
  const lastHealth = new Map<string, NonNullable<DeployRecord["health"]>>();
  for (const record of await log.recent({ limit: 100_000 })) {
    if (!last.has(record.unit)) last.set(record.unit, record);
    if (record.health && !lastHealth.has(record.unit)) lastHealth.set(record.unit, record.health);
  }
  const units = [...new Set([...applied.keys(), ...last.keys(), ...desired.keys()])].sort();
  const drift = new Map<string, DriftedFile[]>();
  if (options.engineDir !== undefined) {
    const engineDir = options.engineDir;
    await Promise.all(
      [...applied.values()].map(async (entry) =>
        drift.set(entry.unit, await unitDrift(engineDir, entry, options)),
      ),
    );
  }
  return units.map((unit) => {
    const entry = applied.get(unit);
    const record = last.get(unit);
    const want = desired.get(unit) ?? null;
    const target = want ?? record?.revision ?? null;
    return {
      unit,
      desiredRevision: want,
      appliedRevision: entry?.revision ?? null,
      appliedAt: entry?.appliedAt ?? null,
      lastDeploy: record
        ? {
            at: record.startedAt,
            result: record.result,
            trigger: record.trigger,
            revision: record.revision,
            reloads: record.reloads.map((outcome) => `${outcome.command} (${outcome.status})`),
            ...(record.restored ? { restored: record.restored } : {}),
            ...(record.error ? { error: record.error } : {}),
          }
        : null,
      health: lastHealth.get(unit) ?? null,
      pending: target !== null && target !== (entry?.revision ?? null),
      drifted: drift.get(unit) ?? [],
    };
  });
}
