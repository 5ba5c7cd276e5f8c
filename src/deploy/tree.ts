// Deploying a whole compiled tree (pure GitOps: `pbxctl deploy`): every unit (each org, the
// gateway, the top-level include files, and with `prune` the org units on disk that the tree no
// longer has) in one deployer batch, so all files are written before the one round of reloads.
import type { CompiledFile } from "../compiler/types.js";
import type { DeployRecord } from "./deploy-log.js";
import type { Deployer } from "./deployer.js";
import { type DeployUnit, splitIntoUnits, unitId } from "./units.js";

export interface TreeDeployOptions {
  /** Remove org units that are on disk but not in the tree. */
  prune?: boolean;
  /** Units read and written at once. Default 16. */
  concurrency?: number;
  trigger?: string;
  /** Called after each unit, for progress. */
  onUnit?: (record: DeployRecord, done: number, total: number) => void;
}

export interface TreeDeployResult {
  records: DeployRecord[];
  /** Units whose files changed or whose reloads ran. */
  changed: DeployRecord[];
  failed: DeployRecord[];
  /** Every reload command sent, in order, with its status. */
  reloads: { command: string; status: string }[];
  durationMs: number;
}

/** Deploys every unit of `files` and resolves with one record per unit; never throws on a failed unit. */
export async function deployTree(
  deployer: Deployer,
  files: readonly CompiledFile[],
  options: TreeDeployOptions = {},
): Promise<TreeDeployResult> {
  const started = performance.now();
  const groups = splitIntoUnits(files);
  const wanted = new Set(groups.map((group) => unitId(group.unit)));
  const stale: DeployUnit[] = options.prune
    ? (await deployer.unitsOnDisk()).filter(
        (unit) => unit.kind === "org" && !wanted.has(unitId(unit)),
      )
    : [];
  const total = groups.length + stale.length;
  let done = 0;
  const records = await deployer.deployUnits(
    [...groups, ...stale.map((unit) => ({ unit, files: [] }))],
    {
      trigger: options.trigger ?? "deploy",
      ...(options.concurrency ? { concurrency: options.concurrency } : {}),
      onUnit: (record) => options.onUnit?.(record, ++done, total),
    },
  );

  records.sort((a, b) => order(a.unit) - order(b.unit) || (a.unit < b.unit ? -1 : 1));
  return {
    records,
    changed: records.filter((record) => record.result !== "unchanged"),
    failed: records.filter((record) => record.result === "failed"),
    // Units deployed together share their reloads: list each outcome once.
    reloads: [...new Set(records.flatMap((record) => record.reloads))].map((outcome) => ({
      command: outcome.command,
      status: outcome.status,
    })),
    durationMs: Math.round(performance.now() - started),
  };
}

function order(unit: string): number {
  return unit.startsWith("org:") ? 0 : unit === "gateway" ? 1 : 2;
}
