// Retention (issue 16): per org, how many days each kind of data is kept (null: forever), and the
// purge that deletes what is older. The purge is a registry of kinds: each kind registers how to
// count and delete one org's data older than a cutoff in its own repository. A purge only ever
// names one org.
import { lstat, readdir, unlink } from "node:fs/promises";
import { join } from "node:path";
import { nodeRecordingsDir } from "../../deploy/node-dirs.js";
import { purgeAuditBefore } from "../../store/audit-log-repository.js";
import { countCallRecordsBefore, purgeCallHistoryBefore } from "../../store/call-history-purge.js";
import type { Db } from "../../store/database.js";
import { listEngineNodes } from "../../store/engine-node-repository.js";
import {
  orgsWithRetention,
  retentionPolicies,
  saveRetentionPolicies,
} from "../../store/retention-repository.js";
import { createTicketRepository } from "../../store/ticket-repository.js";
import { type Actor, recordAudit } from "./audit-log.js";

export const RETENTION_KINDS = ["call_records", "recordings", "tickets", "audit"] as const;
export type RetentionKind = (typeof RETENTION_KINDS)[number];

/** Bounds of a policy: at least a day, at most 100 years; null keeps forever. */
export const RETENTION_DAYS = { minimum: 1, maximum: 36500 } as const;

export type RetentionPolicy = Record<RetentionKind, number | null>;

const DAY_MS = 24 * 60 * 60 * 1000;

/** What a purger needs besides the org and cutoff. */
export interface PurgeContext {
  db: Db;
  /** PBX_RECORDINGS_DIR: recordings live under `<dir>/<org id>/`. */
  recordingsDir: string;
  /**
   * PBX_NODES_DIR: each engine node's recordings are under `<dir>/<node name>.recordings/<org
   * id>/` (docs/nodes.md), purged too. Absent: only PBX_RECORDINGS_DIR is.
   */
  nodesDir?: string;
}

/** Counts (dry run) or deletes one org's data of one kind older than `cutoff`; answers the count. */
export type Purger = (
  context: PurgeContext,
  orgId: string,
  cutoff: Date,
  dryRun: boolean,
) => Promise<number>;

const purgers = new Map<RetentionKind, Purger>();

/** Registers the purger of `kind` (a later registration replaces an earlier one). */
export function registerPurger(kind: RetentionKind, purger: Purger): void {
  purgers.set(kind, purger);
}

/** The org's policy; a kind never set keeps forever. */
export async function getRetention(db: Db, orgId: string): Promise<RetentionPolicy> {
  const stored = await retentionPolicies(db, orgId);
  return Object.fromEntries(
    RETENTION_KINDS.map((kind) => [kind, stored.get(kind) ?? null]),
  ) as RetentionPolicy;
}

/** Sets the kinds given (others keep their value); answers the whole policy. */
export async function setRetention(
  db: Db,
  orgId: string,
  changes: Partial<RetentionPolicy>,
  now: Date,
): Promise<RetentionPolicy> {
  await saveRetentionPolicies(db, orgId, changes, now.toISOString());
  return getRetention(db, orgId);
}

export interface PurgeReport {
  org_id: string;
  dry_run: boolean;
  /** When the purge ran; each kind's cutoff is this minus its days. */
  ran_at: string;
  /** Per kind: its policy, its cutoff and how many items were (or would be) deleted. */
  kinds: Record<
    RetentionKind,
    { days: number | null; cutoff: string | null; deleted: number; supported: boolean }
  >;
}

/** Applies the org's policy now: deletes (or with dryRun counts) what each kind holds too long. */
export async function purgeOrg(
  context: PurgeContext,
  orgId: string,
  now: Date,
  dryRun: boolean,
): Promise<PurgeReport> {
  const policy = await getRetention(context.db, orgId);
  const kinds = {} as PurgeReport["kinds"];
  for (const kind of RETENTION_KINDS) {
    const days = policy[kind];
    const purger = purgers.get(kind);
    if (days === null || !purger) {
      kinds[kind] = { days, cutoff: null, deleted: 0, supported: purger !== undefined };
      continue;
    }
    const cutoff = new Date(now.getTime() - days * DAY_MS);
    const deleted = await purger(context, orgId, cutoff, dryRun);
    kinds[kind] = { days, cutoff: cutoff.toISOString(), deleted, supported: true };
  }
  return { org_id: orgId, dry_run: dryRun, ran_at: now.toISOString(), kinds };
}

/** Purges every org that has a policy, one org at a time; answers one report per org. */
export async function purgeAll(
  context: PurgeContext,
  now: Date,
  dryRun: boolean,
): Promise<PurgeReport[]> {
  const reports: PurgeReport[] = [];
  for (const orgId of await orgsWithRetention(context.db)) {
    reports.push(await purgeOrg(context, orgId, now, dryRun));
  }
  return reports;
}

/** The audit record of a purge that ran outside the API (the API's own is written by its router). */
export async function auditPurge(
  db: Db,
  now: Date,
  report: PurgeReport,
  actor: Actor,
  operation: string,
  runId: string,
): Promise<void> {
  await recordAudit(db, now, {
    orgId: report.org_id,
    actor,
    requestId: runId,
    resourceType: "compliance/retention",
    resourceId: null,
    action: "purge",
    operation,
    before: null,
    after: report,
    schedulesDeploy: false,
  });
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/**
 * The org's recording files (`<dir>/<org id>/*.wav`, regular files only, never a link) last
 * written before `cutoff`, in PBX_RECORDINGS_DIR and in every engine node's recordings (an org
 * moved between nodes has some on each): deleted unless `dryRun`. Only the org's own folders
 * are ever read.
 */
export const purgeRecordings: Purger = async (context, orgId, cutoff, dryRun) => {
  if (!UUID.test(orgId)) throw new Error(`not an org id: ${orgId}`);
  const dirs = [context.recordingsDir];
  if (context.nodesDir !== undefined) {
    for (const node of await listEngineNodes(context.db)) {
      dirs.push(nodeRecordingsDir(context.nodesDir, node.name));
    }
  }
  let count = 0;
  for (const dir of dirs) count += await purgeRecordingsIn(dir, orgId, cutoff, dryRun);
  return count;
};

async function purgeRecordingsIn(
  recordingsDir: string,
  orgId: string,
  cutoff: Date,
  dryRun: boolean,
): Promise<number> {
  const folder = join(recordingsDir, orgId);
  let names: string[];
  try {
    names = await readdir(folder);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return 0;
    throw error;
  }
  let count = 0;
  for (const name of names.sort()) {
    if (!name.endsWith(".wav")) continue;
    const path = join(folder, name);
    const stat = await lstat(path);
    if (!stat.isFile() || stat.mtimeMs >= cutoff.getTime()) continue;
    if (!dryRun) await unlink(path);
    count += 1;
  }
  return count;
}

// Calls, their records and journey steps go together, in bounded batches; the count is records.
registerPurger("call_records", ({ db }, orgId, cutoff, dryRun) =>
  dryRun ? countCallRecordsBefore(db, orgId, cutoff) : purgeCallHistoryBefore(db, orgId, cutoff),
);
registerPurger("recordings", purgeRecordings);
registerPurger("audit", ({ db }, orgId, cutoff, dryRun) =>
  purgeAuditBefore(db, orgId, cutoff.toISOString(), dryRun),
);
registerPurger("tickets", ({ db }, orgId, cutoff, dryRun) => {
  const tickets = createTicketRepository(db);
  const before = cutoff.toISOString();
  return dryRun ? tickets.countOlderThan(orgId, before) : tickets.deleteOlderThan(orgId, before);
});
