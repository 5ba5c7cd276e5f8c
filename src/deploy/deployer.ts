// The diff-aware deployer. For one unit (an org, the gateway, or the top-level include files) it
// compares the compiled files with what is on disk and with what the engine last loaded, writes
// only the files whose content changed (atomically), removes the files the unit no longer has,
// reloads only the modules those files belong to, asks the engine whether it is healthy, and
// records the deploy. Unchanged configuration: no write, no reload (SPEC.md §8).
import { randomUUID } from "node:crypto";
import { access, readdir, readFile, unlink } from "node:fs/promises";
import { join } from "node:path";
import { removeFileDurable, writeFileAtomic } from "../atomic-files.js";
import type { CompiledFile } from "../compiler/types.js";
import type { EngineHealth, EngineProbe, EngineTarget, ReloadOutcome } from "../engine/target.js";
import type { AppliedRevision, DeployLog, DeployRecord } from "./deploy-log.js";
import { probesFor } from "./engine-probes.js";
import { firstQueueLoad, isFullQueueReload } from "./first-queue-load.js";
import { includedPaths, keepIncludesOnDisk } from "./include-guard.js";
import { claimEngineDir, type EngineDirOwner } from "./ownership.js";
import { ReloadQueue, type ReloadQueueOptions } from "./reload-queue.js";
import {
  type EngineModule,
  type FileChange,
  mergeReloads,
  moduleOf,
  type ReloadCommand,
  reloadsWithForced,
} from "./reloads.js";
import { contentHash, revisionOf } from "./revision.js";
import {
  fileStamps,
  readOptional,
  readSnapshot,
  saveSnapshot,
  snapshotFile,
  stampsMatch,
} from "./snapshots.js";
import { listUnitFiles } from "./unit-files.js";
import {
  type DeployUnit,
  InvalidDeployPathError,
  type UnitFiles,
  unitId,
  unitOwns,
} from "./units.js";

export interface DeployerOptions {
  /** The engine config directory (PBX_ASTERISK_DIR). */
  engineDir: string;
  target: EngineTarget;
  log: DeployLog;
  /** Share one queue between deployers of the same engine; made from `target` otherwise. */
  reloadQueue?: ReloadQueue;
  reloadQueueOptions?: ReloadQueueOptions;
  /** Recorded in the engine directory on the first deploy, so another writer can be refused. */
  owner?: EngineDirOwner;
}

export interface DeployOptions {
  /** Recorded with the deploy: `deploy`, `schedule`, `rollback`, ... */
  trigger?: string;
  /** Recorded with a rollback: the kept version it restores. */
  restored?: DeployRecord["restored"];
}

/** Nothing to roll back to: the unit has no previous good version on record. */
export class NoPreviousVersionError extends Error {
  override readonly name = "NoPreviousVersionError";
}

export interface BatchOptions {
  /** Units read and written at once (default 16); reloads are one queue anyway. */
  concurrency?: number;
  /** Called with each unit's record once the batch is done. */
  onUnit?: (record: DeployRecord) => void;
}

interface UnitPlan {
  unit: DeployUnit;
  /** Content hash of each of the unit's files by path (what `markApplied` records). */
  hashes: Record<string, string>;
  record: DeployRecord;
  started: number;
  reloads: ReloadCommand[];
  /** What the engine must show once the reloads ran (objects added present, removed absent). */
  probes: EngineProbe[];
  /** Unchanged, or failed before any reload: nothing left to do but record it. */
  settled: boolean;
}

/** Deploys units into one engine directory; safe to call concurrently for different units. */
export class Deployer {
  readonly engineDir: string;
  readonly target: EngineTarget;
  readonly log: DeployLog;
  readonly reloads: ReloadQueue;
  private readonly locks = new Map<string, Promise<unknown>>();
  private readonly owner: EngineDirOwner | undefined;
  private claimed = false;

  constructor(options: DeployerOptions) {
    this.engineDir = options.engineDir;
    this.owner = options.owner;
    this.target = options.target;
    this.log = options.log;
    this.reloads =
      options.reloadQueue ?? new ReloadQueue(options.target, options.reloadQueueOptions);
  }

  /**
   * Makes `files` the content of `unit` on disk and in the engine. Resolves with the record of the
   * deploy (result `ok`, `unchanged` or `failed`); a failed write leaves the unit's previous files
   * in place. Throws InvalidDeployPathError if a file does not belong to the unit.
   */
  deploy(
    unit: DeployUnit,
    files: readonly CompiledFile[],
    options: DeployOptions = {},
  ): Promise<DeployRecord> {
    return this.deployUnits([{ unit, files: [...files] }], options).then((records) => records[0]!);
  }

  /**
   * Deploys several units together: each unit's files are written (concurrently, isolated per
   * unit), then the reloads they need run once for all of them (a new org and the include file
   * that names it cost one PJSIP reload, not two), then each unit is recorded. Resolves with one
   * record per unit, in the order given. Throws InvalidDeployPathError on a file outside its unit.
   */
  deployUnits(
    groups: readonly UnitFiles[],
    options: DeployOptions & BatchOptions = {},
  ): Promise<DeployRecord[]> {
    const ids = new Set<string>();
    for (const { unit, files } of groups) {
      const id = unitId(unit);
      if (ids.has(id)) throw new InvalidDeployPathError(`${id} is given twice`);
      ids.add(id);
      for (const file of files) {
        if (!unitOwns(unit, file.path)) {
          throw new InvalidDeployPathError(`"${file.path}" does not belong to ${id}`);
        }
      }
    }
    return this.exclusiveAll([...ids].sort(), () => this.runBatch(groups, options));
  }

  /**
   * Deploys units whose files come in batches (the start-up deploy of every org, compiled a
   * batch at a time to bound memory): each batch is written as it arrives and only its plan is
   * kept (reloads, probes, hashes; not the files), then the reloads of every batch run once, and
   * every unit is verified and recorded. One reload of each module for all the orgs instead of
   * one per batch: a PJSIP or dialplan reload costs as much as the engine holds, so ten batches'
   * reloads cost ~5x one (docs/engine.md, "The start-up deploy"). Every unit of `units` is
   * locked for the whole deploy; a batch may hold only those. Throws InvalidDeployPathError on a
   * unit outside `units` or a file outside its unit, before that batch writes anything.
   */
  deployInBatches(
    units: readonly DeployUnit[],
    batches: AsyncIterable<readonly UnitFiles[]>,
    options: DeployOptions & BatchOptions = {},
  ): Promise<DeployRecord[]> {
    const ids = [...new Set(units.map(unitId))].sort();
    const locked = new Set(ids);
    return this.exclusiveAll(ids, async () => {
      const plans: UnitPlan[] = [];
      const seen = new Set<string>();
      for await (const groups of batches) {
        for (const { unit, files } of groups) {
          const id = unitId(unit);
          if (!locked.has(id)) throw new InvalidDeployPathError(`${id} is not in this deploy`);
          if (seen.has(id)) throw new InvalidDeployPathError(`${id} is given twice`);
          seen.add(id);
          for (const file of files) {
            if (!unitOwns(unit, file.path)) {
              throw new InvalidDeployPathError(`"${file.path}" does not belong to ${id}`);
            }
          }
        }
        plans.push(...(await this.prepareAll(groups, options)));
      }
      await this.settle(plans, options);
      return plans.map((plan) => plan.record);
    });
  }

  /** Restores the unit's last good files (kept before the deploy that replaced them) and reloads. */
  async rollback(unit: DeployUnit): Promise<DeployRecord> {
    const snapshot = await readSnapshot(this.engineDir, unit);
    if (!snapshot) {
      throw new NoPreviousVersionError(
        `no previous version of ${unitId(unit)} to roll back to in ${snapshotFile(this.engineDir, unit)} ` +
          `(engine directory ${this.engineDir}; a version is kept when a deploy replaces files the engine had loaded)`,
      );
    }
    return this.deploy(unit, snapshot.files, {
      trigger: "rollback",
      restored: { revision: snapshot.revision, savedAt: snapshot.savedAt },
    });
  }

  /** The unit's files as they are on disk now, sorted by path. */
  async currentFiles(unit: DeployUnit): Promise<CompiledFile[]> {
    const disk = await this.readUnit(unit);
    return [...disk.entries()]
      .map(([path, content]) => ({ path, content }))
      .sort((a, b) => (a.path < b.path ? -1 : 1));
  }

  /** Units that have files on disk (every org directory, the gateway, the top-level files). */
  async unitsOnDisk(): Promise<DeployUnit[]> {
    const units: DeployUnit[] = [];
    const orgs = await readdir(join(this.engineDir, "orgs")).catch(() => [] as string[]);
    for (const prefix of orgs.sort()) {
      if (/^[A-Za-z][A-Za-z0-9_-]{0,46}_$/.test(prefix)) units.push({ kind: "org", prefix });
    }
    if ((await this.readUnit({ kind: "gateway" })).size > 0) units.push({ kind: "gateway" });
    if ((await this.readUnit({ kind: "top" })).size > 0) units.push({ kind: "top" });
    return units;
  }

  private async runBatch(
    groups: readonly UnitFiles[],
    options: DeployOptions & BatchOptions,
  ): Promise<DeployRecord[]> {
    const plans = await this.prepareAll(groups, options);
    await this.settle(plans, options);
    return plans.map((plan) => plan.record);
  }

  /** Reads, decides and writes each unit's files (several at once); the plans in `groups`' order. */
  private async prepareAll(
    groups: readonly UnitFiles[],
    options: DeployOptions & BatchOptions,
  ): Promise<UnitPlan[]> {
    const plans: UnitPlan[] = new Array(groups.length);
    if (this.owner && !this.claimed) {
      // Best effort: the marker only serves refusals; a directory we cannot write fails below.
      await claimEngineDir(this.engineDir, this.owner).catch(() => {});
      this.claimed = true;
    }
    // Org and gateway files first, the top-level include files last: an include may only name
    // a file that is on disk by then (include-guard.ts).
    const phases = [
      groups.map((_, index) => index).filter((index) => groups[index]!.unit.kind !== "top"),
      groups.map((_, index) => index).filter((index) => groups[index]!.unit.kind === "top"),
    ];
    for (const indexes of phases) {
      let next = 0;
      const worker = async () => {
        while (next < indexes.length) {
          const index = indexes[next++]!;
          const { unit, files } = groups[index]!;
          plans[index] = await this.prepare(unit, await this.guardIncludes(unit, files), options);
        }
      };
      await Promise.all(Array.from({ length: Math.max(1, options.concurrency ?? 16) }, worker));
    }
    return plans;
  }

  /** Runs the plans' reloads once for all of them, verifies them, and records every unit. */
  private async settle(plans: readonly UnitPlan[], options: BatchOptions): Promise<void> {
    const live = plans.filter((plan) => !plan.settled);
    const commands = await this.asFirstQueueLoad(mergeReloads(live.map((plan) => plan.reloads)));
    const reloading = live
      .filter((plan) => plan.reloads.length > 0)
      .map((plan) => plan.record.unit);
    const outcomes = commands.length > 0 ? await this.reloads.run(commands, reloading) : [];
    const ran = outcomes.some((outcome) => outcome.status !== "skipped");
    const health = ran ? await this.checkHealth() : undefined;
    const contradicted = ran ? await this.verifyEngine(live, outcomes) : new Map<string, string>();
    await Promise.all(
      live.map((plan) => this.conclude(plan, commands, outcomes, health, contradicted)),
    );
    await Promise.all(
      plans.map(async (plan) => {
        plan.record.durationMs = Math.round((performance.now() - plan.started) * 100) / 100;
        await this.log.record(plan.record);
        options.onUnit?.(plan.record);
      }),
    );
  }

  /**
   * `commands` with a full queue reload made a fresh load of app_queue when the engine has never
   * loaded a queues file from this directory (firstQueueLoad: no device-state storm, nothing to
   * lose). The deploy log is the record of what the engine loaded; a log that cannot be read
   * keeps the plain reload.
   */
  private async asFirstQueueLoad(commands: ReloadCommand[]): Promise<ReloadCommand[]> {
    if (!commands.some(isFullQueueReload)) return commands;
    const applied = await this.log.allApplied().catch(() => null);
    return applied === null ? commands : firstQueueLoad(commands, applied);
  }

  /** Reads what is deployed, decides, and writes the unit's changed files. */
  private async prepare(
    unit: DeployUnit,
    files: readonly CompiledFile[],
    options: DeployOptions,
  ): Promise<UnitPlan> {
    const id = unitId(unit);
    const plan: UnitPlan = {
      unit,
      hashes: {},
      started: performance.now(),
      reloads: [],
      probes: [],
      settled: false,
      record: {
        id: randomUUID(),
        unit: id,
        revision: "", // set below: hashing is skipped when the unit is provably unchanged
        previousRevision: null,
        trigger: options.trigger ?? "deploy",
        startedAt: new Date().toISOString(),
        durationMs: 0,
        result: "ok",
        filesWritten: [],
        filesRemoved: [],
        reloads: [],
        ...(options.restored ? { restored: options.restored } : {}),
      },
    };
    const { record } = plan;
    const fail = (message: string): UnitPlan => {
      record.result = "failed";
      record.error = message;
      plan.settled = true;
      return plan;
    };

    let disk: Map<string, string>;
    let applied: AppliedRevision | null;
    try {
      [disk, applied] = await Promise.all([this.readUnit(unit), this.log.applied(id)]);
    } catch (error) {
      return fail(`reading the deployed files failed: ${(error as Error).message}`);
    }
    record.previousRevision = applied?.revision ?? null;

    const desired = new Map(files.map((file) => [file.path, file.content]));
    const toWrite = files.filter((file) => disk.get(file.path) !== file.content);
    const toRemove = [...disk.keys()].filter((path) => !desired.has(path)).sort();
    const sameOnDisk = toWrite.length === 0 && toRemove.length === 0;
    if (sameOnDisk && applied && (await stampsMatch(this.engineDir, applied, disk))) {
      // The files on disk are the desired ones and still those the engine loaded.
      record.revision = applied.revision;
      record.result = "unchanged";
      plan.settled = true;
      return plan;
    }
    record.revision = revisionOf(files);
    plan.hashes = Object.fromEntries(files.map((file) => [file.path, contentHash(file.content)]));
    if (sameOnDisk && applied?.revision === record.revision) {
      record.result = "unchanged";
      plan.settled = true;
      return plan;
    }

    plan.reloads = planReloads(disk, desired, applied);
    const reloaded = new Set(plan.reloads.map((command) => command.module));
    plan.probes = probesFor(
      [...new Set([...disk.keys(), ...desired.keys()])]
        .filter((path) => reloaded.has(moduleOf(path)!))
        .map((path) => ({
          path,
          before: disk.get(path) ?? null,
          after: desired.get(path) ?? null,
        })),
    );
    if (toWrite.length > 0 || toRemove.length > 0) {
      try {
        // Keep the last good version for rollback: only what the engine has actually loaded.
        if (applied && disk.size > 0 && revisionOfMap(disk) === applied.revision) {
          await saveSnapshot(
            this.engineDir,
            unit,
            disk,
            applied.revision,
            new Date().toISOString(),
          );
        }
        await this.writeUnit(unit, disk, toWrite, toRemove);
      } catch (error) {
        return fail(`writing files failed, previous files kept: ${(error as Error).message}`);
      }
      record.filesWritten = toWrite.map((file) => file.path).sort();
      record.filesRemoved = toRemove;
    }
    return plan;
  }

  /** Records the reload outcomes of the unit's modules; marks the revision applied if they worked. */
  private async conclude(
    plan: UnitPlan,
    commands: readonly ReloadCommand[],
    outcomes: readonly ReloadOutcome[],
    health: EngineHealth | undefined,
    contradicted: ReadonlyMap<string, string>,
  ): Promise<void> {
    const { record } = plan;
    const modules = new Set(plan.reloads.map((command) => command.module));
    record.reloads = outcomes.filter((_, i) => modules.has(commands[i]!.module));
    if (health && record.reloads.some((outcome) => outcome.status !== "skipped")) {
      record.health = health;
    }
    const failed = record.reloads.filter((outcome) => outcome.status === "failed");
    if (failed.length > 0) {
      record.result = "failed";
      record.error = failed.map((outcome) => outcome.error ?? outcome.command).join("; ");
      return;
    }
    const notLoaded = contradicted.get(record.unit);
    if (notLoaded) {
      // The engine answered the reload but does not show the change: not applied, so the
      // next deploy reloads again (and the scheduler retries).
      record.result = "failed";
      record.error = notLoaded;
      return;
    }
    try {
      await this.log.markApplied({
        unit: record.unit,
        revision: record.revision,
        files: plan.hashes,
        stats: await fileStamps(this.engineDir, Object.keys(plan.hashes)),
        appliedAt: new Date().toISOString(),
        deployId: record.id,
      });
    } catch (error) {
      record.result = "failed";
      record.error = `recording the applied revision failed: ${(error as Error).message}`;
    }
  }

  /**
   * Asks the engine whether each unit's reloaded objects are there (or gone). Resolves with the
   * units it contradicts and why; a unit whose reloads failed anyway is not asked.
   */
  private async verifyEngine(
    plans: readonly UnitPlan[],
    outcomes: readonly ReloadOutcome[],
  ): Promise<Map<string, string>> {
    const contradicted = new Map<string, string>();
    if (!this.target.verify || outcomes.some((outcome) => outcome.status === "failed")) {
      return contradicted;
    }
    for (const plan of plans) {
      if (plan.probes.length === 0) continue;
      try {
        const wrong = await this.target.verify(plan.probes);
        if (wrong.length > 0) {
          const what = wrong.map(
            (probe) =>
              `${probe.kind} ${probe.name} ${probe.present ? "is missing" : "is still loaded"} (${probe.path})`,
          );
          contradicted.set(
            plan.record.unit,
            `the engine answered the reload but did not load the change: ${what.join("; ")}`,
          );
        }
      } catch (error) {
        contradicted.set(
          plan.record.unit,
          `could not verify the reload: ${(error as Error).message}`,
        );
      }
    }
    return contradicted;
  }

  /**
   * The top unit's include lines, less those naming a file that is not on disk. The top files
   * name every org's files, so they are looked up together, off the event loop.
   */
  private async guardIncludes(
    unit: DeployUnit,
    files: readonly CompiledFile[],
  ): Promise<readonly CompiledFile[]> {
    if (unit.kind !== "top") return files;
    const named = [...new Set(files.flatMap((file) => includedPaths(file.content)))];
    const onDisk = new Set<string>();
    await Promise.all(
      named.map((path) =>
        access(join(this.engineDir, path)).then(
          () => onDisk.add(path),
          () => {},
        ),
      ),
    );
    return files.map((file) => {
      const guarded = keepIncludesOnDisk(file.content, (path) => onDisk.has(path));
      return guarded.dropped.length > 0 ? { path: file.path, content: guarded.content } : file;
    });
  }

  private async checkHealth(): Promise<EngineHealth> {
    try {
      return await this.target.health();
    } catch (error) {
      return {
        status: "unhealthy",
        checkedAt: new Date().toISOString(),
        error: (error as Error).message,
      };
    }
  }

  /** Writes and removes files; on failure puts back what was already changed, then throws. */
  private async writeUnit(
    unit: DeployUnit,
    disk: ReadonlyMap<string, string>,
    toWrite: readonly CompiledFile[],
    toRemove: readonly string[],
  ): Promise<void> {
    const done: string[] = [];
    // Directories left empty are removed up to orgs/ (an org deleted whole leaves no directory).
    const stopAt = unit.kind === "org" ? join(this.engineDir, "orgs") : this.engineDir;
    try {
      for (const file of toWrite) {
        await writeFileAtomic(join(this.engineDir, file.path), file.content);
        done.push(file.path);
      }
      for (const path of toRemove) {
        await removeFileDurable(join(this.engineDir, path), stopAt);
        done.push(path);
      }
    } catch (error) {
      for (const path of done.reverse()) {
        const before = disk.get(path);
        const file = join(this.engineDir, path);
        if (before === undefined) await removeFileDurable(file, stopAt).catch(() => {});
        else await writeFileAtomic(file, before).catch(() => {});
      }
      throw error;
    }
  }

  /** The unit's files on disk by relative path; leftover temp files are deleted on the way. */
  private async readUnit(unit: DeployUnit): Promise<Map<string, string>> {
    const { paths, temps } = await listUnitFiles(this.engineDir, unit);
    await Promise.all(temps.map((path) => unlink(join(this.engineDir, path)).catch(() => {})));
    const contents = await Promise.all(
      paths.map((path) =>
        unit.kind === "top"
          ? readOptional(join(this.engineDir, path))
          : readFile(join(this.engineDir, path), "utf8"),
      ),
    );
    const files = new Map<string, string>();
    paths.forEach((path, i) => {
      if (contents[i] !== null) files.set(path, contents[i]!);
    });
    return files;
  }

  /** Runs `work` holding every key's lock (taken in sorted order, so batches cannot deadlock). */
  private exclusiveAll<T>(keys: readonly string[], work: () => Promise<T>): Promise<T> {
    if (keys.length === 0) return work();
    return this.exclusive(keys[0]!, () => this.exclusiveAll(keys.slice(1), work));
  }

  /** Runs `work` after every earlier call for the same key has settled. */
  private exclusive<T>(key: string, work: () => Promise<T>): Promise<T> {
    const previous = this.locks.get(key) ?? Promise.resolve();
    const next = previous.then(work, work);
    const tail = next.catch(() => {});
    this.locks.set(key, tail);
    void tail.then(() => {
      if (this.locks.get(key) === tail) this.locks.delete(key);
    });
    return next;
  }
}

/**
 * The reloads a deploy needs: changes between what the engine loaded and what is desired. A file
 * whose content on disk is not what the engine loaded (a previous reload failed, or pbxctl never
 * recorded it) gets its whole module reloaded, since what the engine holds is unknown.
 */
export function planReloads(
  disk: ReadonlyMap<string, string>,
  desired: ReadonlyMap<string, string>,
  applied: AppliedRevision | null,
): ReloadCommand[] {
  const changes: FileChange[] = [];
  const forced = new Set<EngineModule>();
  const paths = new Set([...disk.keys(), ...desired.keys(), ...Object.keys(applied?.files ?? {})]);
  for (const path of paths) {
    const before = disk.get(path) ?? null;
    const after = desired.get(path) ?? null;
    const loaded = applied?.files[path];
    const known =
      before === null
        ? loaded === undefined
        : applied !== null && loaded !== undefined && loaded === contentHash(before);
    if (known) {
      changes.push({ path, before, after });
    } else {
      const module = moduleOf(path);
      if (module) forced.add(module);
    }
  }
  return reloadsWithForced(changes, forced);
}

function revisionOfMap(files: ReadonlyMap<string, string>): string {
  return revisionOf([...files.entries()].map(([path, content]) => ({ path, content })));
}

export type { ReloadOutcome };
