import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { Flags } from "@oclif/core";
import {
  dataDirFrom,
  dataDirStore,
  edgeSettingsFrom,
  gatewayOptionsFrom,
  pjsipModeFrom,
  resolveEnginePaths,
  resolveGitopsEngineDir,
} from "../../config.js";
import { FileDeployLog } from "../../deploy/deploy-log.js";
import { type EdgeStatus, edgeStatus } from "../../deploy/edge-sync.js";
import { nodeEngineDir } from "../../deploy/node-runtime.js";
import { type UnitStatus, unitStatuses } from "../../deploy/status.js";
import { storeUnitStatuses } from "../../deploy/store-status.js";
import { listEngineNodes as listEngineNodeViews } from "../../domain/nodes/engine-nodes.js";
import { listEngineNodes } from "../../store/engine-node-repository.js";
import {
  createPjsipRealtimeRepository,
  type PendingPjsipObject,
} from "../../store/pjsip-realtime-repository.js";
import { PbxCommand } from "../lib/base-command.js";
import { colourEnabled, painter } from "../lib/colour.js";
import { openExistingStore } from "../lib/existing-store.js";
import { StatusExitCode } from "../lib/exit-codes.js";
import { statusExitCode, statusTable } from "../lib/status-table.js";

export interface StatusCommandResult {
  /** `store`: the server's data directory; `files`: the deploy log of an engine directory. */
  source: "store" | "files";
  /** The data directory (store) or the engine directory (files) read. */
  from: string;
  /** The engine directory whose files were checked for drift. */
  engineDir: string;
  units: UnitStatus[];
  /**
   * PBX_PJSIP=realtime: the PJSIP objects whose rows changed and that the engine has not taken
   * yet (cache expiry or registrations reload still owed). Absent in file mode. With engine
   * nodes each is owed by one node, named by `node`.
   */
  pjsipPending?: PendingPjsipStatus[];
  /**
   * PBX_EDGE_DIR: the SIP edge's tables, what the store routes to now (wanted) against what the
   * edge last took and read back (applied). Absent without an edge.
   */
  edge?: EdgeStatus;
  /**
   * With engine nodes: each node whose call events are not stored, and why (one systemname per
   * node, docs/nodes.md). Absent without nodes.
   */
  nodeProblems?: { node: string; problem: string }[];
}

/**
 * A PJSIP object an engine has not taken yet. With engine nodes defined, `node` names the node
 * that owes it (the same object is owed once per node holding its org); null when its `nodeId`
 * is no defined node's (owed before nodes were defined, or by a node since removed).
 */
export type PendingPjsipStatus = PendingPjsipObject & { node?: string | null };

export default class Status extends PbxCommand {
  static override summary =
    "Show, per deploy unit, what the engine runs and how the last deploy went.";
  static override description =
    "For each unit (org, gateway, top-level include files): the desired revision (what the " +
    "configuration compiles to now), the applied revision (what the engine last loaded " +
    "successfully), the last deploy (when, result, reloads) and the engine's health after it. A " +
    "unit whose desired revision is not the applied one is marked PENDING (saved but not live); " +
    "a unit whose files on disk are not those the engine loaded (content hash per file) is marked " +
    "DRIFTED, with the files concerned. A file whose size, mtime and inode match the stamp taken " +
    "when pbxctl wrote it is not re-read unless --refresh is given.\n\n" +
    "Where it reads: with --data-dir, or when the data directory (PBX_DATA_DIR, default ./var) " +
    "holds a store and --etc is not given, the server's store (desired revisions compiled from " +
    "it); otherwise the deploy log (.pbxctl/) of the engine directory written by `pbxctl deploy`. " +
    "Org units also show the org's slug (from the store) or name (from its generated files).\n\n" +
    "With engine nodes defined (docs/nodes.md), the units are grouped by node: each node's " +
    "orgs, gateway and include files, from that node's deploy log and directory " +
    "(<PBX_NODES_DIR>/<node name>); `node` names it in --json. A node whose call events are " +
    "not stored (no systemname among several nodes, or another node's) is named with the fix, " +
    "and makes the exit code that of a failed unit.\n\n" +
    "With PBX_PJSIP=realtime, the PJSIP objects (endpoint, auth, aor, registration) whose rows " +
    "changed and that the engine has not taken yet are listed after the table, and count as " +
    "PENDING; with engine nodes, under the node that owes them (`node` in --json).\n\n" +
    "With PBX_EDGE_DIR (a SIP edge), an `edge` line follows: the revision of the edge's tables " +
    "the store routes to now (wanted) beside the one the edge last took and read back (applied), " +
    "the changes not pushed yet and the last push's failure; an edge behind counts as PENDING, a " +
    "failed push as FAILED.\n\n" +
    "Exit code, the worst state of any unit: 0 all OK, 3 PENDING, 4 DRIFTED, 5 FAILED (1 an " +
    "error such as no store, 2 a usage error).";
  static override examples = [
    "<%= config.bin %> <%= command.id %>",
    "<%= config.bin %> <%= command.id %> --data-dir /var/lib/pbxctl --json",
    "<%= config.bin %> <%= command.id %> --etc /etc/asterisk/pbxctl",
  ];
  static override flags = {
    etc: Flags.directory({
      summary:
        "Engine config directory of `pbxctl deploy` [default: PBX_ASTERISK_DIR or ./var/gitops-asterisk].",
      exclusive: ["data-dir"],
    }),
    "data-dir": Flags.directory({
      summary: "Data directory holding the server's store (env PBX_DATA_DIR, default ./var).",
    }),
    refresh: Flags.boolean({
      default: false,
      summary:
        "Re-read and hash every deployed file, even those whose size and mtime are unchanged.",
    }),
  };

  async run(): Promise<StatusCommandResult> {
    const { flags } = await this.parse(Status);
    const dataDir = dataDirFrom(process.env, flags["data-dir"]);
    // PBX_DATABASE_URL names a store whatever the data dir holds.
    const store = dataDirStore(process.env, dataDir);
    const useStore =
      flags["data-dir"] !== undefined ||
      (flags.etc === undefined && (store.kind === "postgres" || existsSync(store.file)));
    const options = { refresh: flags.refresh };
    const result = useStore
      ? await this.fromStore(dataDir, options)
      : await this.fromFiles(flags.etc, options);
    const pending = result.pjsipPending ?? [];
    if (!this.jsonEnabled()) {
      if (result.units.length === 0) this.log(`no deploys recorded in ${result.from}`);
      else for (const line of statusTable(result.units, painter(colourEnabled()))) this.log(line);
      for (const line of pendingPjsipLines(pending)) this.log(line);
      if (result.edge) for (const line of edgeStatusLines(result.edge)) this.log(line);
      for (const { node, problem } of result.nodeProblems ?? []) {
        this.log(`node ${node}: ${problem}`);
      }
    }
    let code = statusExitCode(result.units);
    if (pending.length > 0 && code === StatusExitCode.ok) code = StatusExitCode.pending;
    // A node whose calls are not recorded is a failure of the install, not a pending change.
    if ((result.nodeProblems ?? []).length > 0) code = Math.max(code, StatusExitCode.failed);
    return this.finish(result, worseWithEdge(code, result.edge));
  }

  private async fromStore(
    dataDir: string,
    options: { refresh: boolean },
  ): Promise<StatusCommandResult> {
    const store = await openExistingStore(dataDir);
    try {
      const paths = resolveEnginePaths(process.env, store.dataDir);
      const engineDir = paths.asteriskDir;
      const pjsip = pjsipModeFrom(process.env);
      const gateway = gatewayOptionsFrom(process.env);
      const behindEdge = edgeSettingsFrom(process.env) !== null;
      // With engine nodes (issue 25): each node's units, from its own deploy log and directory.
      const nodes = await listEngineNodes(store.db);
      const units =
        nodes.length === 0
          ? await storeUnitStatuses(
              store.db,
              gateway,
              { ...options, engineDir },
              paths.soundsDir,
              pjsip,
              undefined,
              behindEdge,
            )
          : (
              await Promise.all(
                nodes.map(async (node) =>
                  (
                    await storeUnitStatuses(
                      store.db,
                      gateway,
                      { ...options, engineDir: nodeEngineDir(paths.nodesDir, node.name) },
                      paths.soundsDir,
                      pjsip,
                      node.id,
                      behindEdge,
                    )
                  ).map((unit) => ({ ...unit, node: node.name })),
                ),
              )
            ).flat();
      const edgeSettings = edgeSettingsFrom(process.env);
      const edge = edgeSettings ? { edge: await edgeStatus(store.db, edgeSettings) } : {};
      const problems =
        nodes.length === 0
          ? {}
          : {
              nodeProblems: (await listEngineNodeViews({ db: store.db }))
                .filter((node) => node.problem !== null)
                .map((node) => ({ node: node.name, problem: node.problem! })),
            };
      if (pjsip === "file") {
        return { source: "store", from: store.dataDir, engineDir, units, ...edge, ...problems };
      }
      const owed = await createPjsipRealtimeRepository(store.db).pending();
      const nodeNames = new Map(nodes.map((node) => [node.id, node.name]));
      const pjsipPending: PendingPjsipStatus[] =
        nodes.length === 0
          ? owed
          : owed.map((object) => ({ ...object, node: nodeNames.get(object.nodeId) ?? null }));
      return {
        source: "store",
        from: store.dataDir,
        engineDir,
        units,
        pjsipPending,
        ...edge,
        ...problems,
      };
    } finally {
      await store.db.destroy();
    }
  }

  private async fromFiles(
    etcFlag: string | undefined,
    options: { refresh: boolean },
  ): Promise<StatusCommandResult> {
    const etc = resolve(etcFlag ?? resolveGitopsEngineDir(process.env));
    const units = await unitStatuses(new FileDeployLog(etc), new Map(), {
      ...options,
      engineDir: etc,
    });
    return { source: "files", from: etc, engineDir: etc, units };
  }
}

/**
 * The pending PJSIP objects' lines. Without engine nodes, one line each; with nodes, under a line
 * per node (defined nodes by name, then any other engine the store still owes), since the same
 * object is owed by every node holding its org.
 */
export function pendingPjsipLines(pending: readonly PendingPjsipStatus[]): string[] {
  if (pending.length === 0) return [];
  const line = (object: PendingPjsipStatus) =>
    `${object.kind} ${object.id} (saved ${object.queuedAt})`;
  if (pending.every((object) => object.node === undefined)) {
    return [
      `PJSIP objects the engine has not taken yet (${pending.length}):`,
      ...pending.map((object) => `  ${line(object)}`),
    ];
  }
  const groups = new Map<string, { rank: number; heading: string; lines: string[] }>();
  for (const object of pending) {
    const [rank, heading]: [number, string] = object.node
      ? [0, `node ${object.node}`]
      : object.nodeId === ""
        ? [1, "the implicit engine (no node)"]
        : [2, `node id ${object.nodeId} (no longer defined)`];
    const key = `${rank} ${heading}`;
    const group = groups.get(key) ?? { rank, heading, lines: [] };
    group.lines.push(`    ${line(object)}`);
    groups.set(key, group);
  }
  const ordered = [...groups.values()].sort(
    (a, b) => a.rank - b.rank || a.heading.localeCompare(b.heading),
  );
  return [
    `PJSIP objects the engines have not taken yet (${pending.length}):`,
    ...ordered.flatMap((group) => [`  ${group.heading} (${group.lines.length}):`, ...group.lines]),
  ];
}

const short = (revision: string | null) => (revision ? revision.slice(0, 12) : "-");

/** The edge section: one line, then the last failure when there is one. */
export function edgeStatusLines(edge: EdgeStatus): string[] {
  const lines = [
    `edge ${edge.edge}: ${edge.state}  wanted ${short(edge.wantedRevision)}  applied ${short(edge.appliedRevision)}${edge.appliedAt ? ` (${edge.appliedAt})` : ""}  changes not pushed: ${edge.pendingChanges}`,
  ];
  if (edge.error)
    lines.push(
      `  last push failed${edge.attemptedAt ? ` at ${edge.attemptedAt}` : ""}: ${edge.error}`,
    );
  return lines;
}

/** The exit code with the edge counted as one more unit. */
function worseWithEdge(code: number, edge: EdgeStatus | undefined): number {
  if (!edge || edge.state === "OK") return code;
  const edgeCode = edge.state === "FAILED" ? StatusExitCode.failed : StatusExitCode.pending;
  return Math.max(code, edgeCode);
}
