// What was deployed and what the engine runs. The deployer writes through this narrow interface;
// the file-backed log below serves the store-less (GitOps) flow, and the store implements the
// same interface for the server.
import { appendFile, mkdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { writeFileAtomic } from "../atomic-files.js";
import type { EngineHealth, ReloadOutcome } from "../engine/target.js";

export type DeployResultKind = "ok" | "unchanged" | "failed";

/** One deploy of one unit, as recorded. */
export interface DeployRecord {
  id: string;
  /** Unit id: `org:<context_prefix>`, `gateway` or `top`. */
  unit: string;
  /** Revision deployed (the desired one at the time): SHA-256 over the unit's sorted files. */
  revision: string;
  /** What the engine had loaded before this deploy (null when unknown). */
  previousRevision: string | null;
  /** `deploy`, `schedule`, `rollback`, ... */
  trigger: string;
  startedAt: string;
  durationMs: number;
  result: DeployResultKind;
  filesWritten: string[];
  filesRemoved: string[];
  reloads: ReloadOutcome[];
  /** The engine's answer to the health check after the reloads (absent when none ran). */
  health?: EngineHealth;
  /** A rollback's source: the kept version it put back (revision, and when it was kept). */
  restored?: { revision: string; savedAt: string };
  error?: string;
}

export interface FileStamp {
  size: number;
  mtimeMs: number;
  /** Every write is a new file renamed into place, so a rewrite also changes the inode. */
  ino: number;
}

/** What the engine last loaded successfully for one unit. */
export interface AppliedRevision {
  unit: string;
  revision: string;
  /** SHA-256 of each file's content, by path: tells which files the engine has not loaded. */
  files: Record<string, string>;
  /**
   * Size and mtime of each file right after it was written: when the files on disk still show
   * them and equal the desired content, the unit is unchanged without hashing it again.
   */
  stats?: Record<string, FileStamp>;
  appliedAt: string;
  deployId: string;
}

export interface DeployLog {
  /** Appends one deploy record. */
  record(entry: DeployRecord): Promise<void>;
  /** The applied revision of a unit, or null when none was ever applied. */
  applied(unit: string): Promise<AppliedRevision | null>;
  /** Every unit's applied revision. */
  allApplied(): Promise<AppliedRevision[]>;
  /** Marks a revision as loaded by the engine. */
  markApplied(applied: AppliedRevision): Promise<void>;
  /** The latest records, newest first, optionally for one unit. */
  recent(options?: { unit?: string; limit?: number }): Promise<DeployRecord[]>;
}

/** Directory (inside the engine dir) holding the deploy log, applied revisions and snapshots. */
export const STATE_DIR = ".pbxctl";

/**
 * A DeployLog in `<engineDir>/.pbxctl/`: `deploys.jsonl` (one record a line, appended in batches)
 * and `applied.json` (rewritten atomically). One writer per engine dir at a time.
 */
export class FileDeployLog implements DeployLog {
  private readonly dir: string;
  private appliedCache: Map<string, AppliedRevision> | null = null;
  private pendingLines: string[] = [];
  private flushing: Promise<void> | null = null;
  private appliedWriting: Promise<void> | null = null;
  private appliedDirty = false;

  constructor(engineDir: string) {
    this.dir = join(engineDir, STATE_DIR);
  }

  get logFile(): string {
    return join(this.dir, "deploys.jsonl");
  }

  get appliedFile(): string {
    return join(this.dir, "applied.json");
  }

  record(entry: DeployRecord): Promise<void> {
    this.pendingLines.push(`${JSON.stringify(entry)}\n`);
    // Records that arrive while a batch is being written go out together in the next one.
    this.flushing ??= this.flush();
    return this.flushing;
  }

  async applied(unit: string): Promise<AppliedRevision | null> {
    return (await this.loadApplied()).get(unit) ?? null;
  }

  async allApplied(): Promise<AppliedRevision[]> {
    return [...(await this.loadApplied()).values()];
  }

  async markApplied(applied: AppliedRevision): Promise<void> {
    const map = await this.loadApplied();
    map.set(applied.unit, applied);
    this.appliedDirty = true;
    // Calls that arrive while the file is being written share the next write.
    // (The loop clears appliedWriting in the same step as its last check, so no call is missed.)
    this.appliedWriting ??= (async () => {
      try {
        while (this.appliedDirty) {
          this.appliedDirty = false;
          const sorted = [...map.values()].sort((a, b) => (a.unit < b.unit ? -1 : 1));
          await writeFileAtomic(this.appliedFile, `${JSON.stringify(sorted, null, 1)}\n`);
        }
      } finally {
        this.appliedWriting = null;
      }
    })();
    await this.appliedWriting;
  }

  async recent(options: { unit?: string; limit?: number } = {}): Promise<DeployRecord[]> {
    await this.flushing;
    const text = await readFile(this.logFile, "utf8").catch(() => "");
    const records: DeployRecord[] = [];
    const lines = text.split("\n");
    const limit = options.limit ?? 50;
    for (let i = lines.length - 1; i >= 0 && records.length < limit; i--) {
      const line = lines[i]!;
      if (!line) continue;
      let record: DeployRecord;
      try {
        record = JSON.parse(line) as DeployRecord;
      } catch {
        continue; // a line cut by a crash: skip it
      }
      if (!options.unit || record.unit === options.unit) records.push(record);
    }
    return records;
  }

  /** Writes pending lines until none are left; clears `flushing` in the step of its last check. */
  private async flush(): Promise<void> {
    try {
      await mkdir(this.dir, { recursive: true });
      while (this.pendingLines.length > 0) {
        const batch = this.pendingLines.join("");
        this.pendingLines = [];
        await appendFile(this.logFile, batch);
      }
    } finally {
      this.flushing = null;
    }
  }

  private async loadApplied(): Promise<Map<string, AppliedRevision>> {
    if (this.appliedCache) return this.appliedCache;
    const text = await readFile(this.appliedFile, "utf8").catch(() => "[]");
    const map = new Map<string, AppliedRevision>();
    for (const applied of JSON.parse(text) as AppliedRevision[]) map.set(applied.unit, applied);
    this.appliedCache ??= map;
    return this.appliedCache;
  }
}
