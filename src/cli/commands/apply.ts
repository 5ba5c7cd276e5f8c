import { Args, Flags } from "@oclif/core";
import { systemClock } from "../../clock.js";
import { webhookAllowPrivateFrom } from "../../config.js";
import type { Change } from "../../domain/config/apply.js";
import { applyAuditRun } from "../../domain/config/apply-audit.js";
import type {
  AppliedOrgDeploy,
  deployAppliedToEngine,
} from "../../domain/config/engine-deploys.js";
import {
  type ApplyFailure,
  applyOrgFiles,
  type FileApplyResult,
  NoStoreError,
  openDataStore,
  orgFilesChangedSince,
} from "../../domain/config/gitops.js";
import { isDomainError } from "../../domain/errors.js";
import {
  applyNodesChanges,
  type NodesChange,
  planNodesFile,
  storedNodesOf,
} from "../../domain/nodes/nodes-apply.js";
import {
  ENGINE_KINDS,
  EngineConfigError,
  type EngineKind,
  EngineUnavailableError,
} from "../../engine/target.js";
import { CommandFailure, PbxCommand } from "../lib/base-command.js";
import { ExitCode } from "../lib/exit-codes.js";
import { cacheFlag } from "../lib/flags.js";
import { loadChangedOrgs, loadValidOrgs } from "../lib/load.js";
import { nodesFlag, readNodesFile } from "../lib/nodes-file.js";
import { formatImpact } from "../lib/plan.js";

export interface ApplyCommandResult {
  dryRun: boolean;
  files: string[];
  orgs: (FileApplyResult & {
    deploy?: AppliedOrgDeploy;
  })[];
  failures: ApplyFailure[];
  gateway: { result: string; reloads: string[] } | null;
  /** With --nodes: the node and placement changes the nodes file made (or would make). */
  nodes?: NodesChange[];
}

const SIGN: Record<Change["action"], string> = {
  create: "+",
  assign: "+",
  update: "~",
  delete: "-",
  release: "-",
};

export default class Apply extends PbxCommand {
  static override summary =
    "Reconcile the store to org YAML files, then deploy the orgs that changed.";
  static override description =
    "Each org file is applied in one transaction (all or nothing per org): resources are " +
    "matched by id, or by extension / number / name, and created or updated; with --prune, " +
    "what the file no longer has is deleted (DIDs go back to the pool). The org as it will be " +
    "is checked with the API's rules first; extensions are claimed as the API claims them. An " +
    "org that is not in the store is created with the file's id (its secret is unknown: " +
    "regenerate it as the admin). Trunk passwords are read from their password_env variables. " +
    "--dry-run prints the changes and writes nothing. With --changed-since, only the org files " +
    "added or changed since that git revision are applied (a push pipeline). Exit 1 when an " +
    "org failed to apply or deploy.\n\n" +
    "With a nodes file (--nodes), the store's engine nodes and placements follow it too, after " +
    "the org files (so a new org can be placed): each node's sip_address and state, each org's " +
    "node and standby (pinned, with the admin API's rules). Every node it names must be in the " +
    "store already (`pbxctl nodes add`: the AMI credentials are not in the file); nodes it leaves " +
    "out are left alone. Its edge and carriers parts are the edge's own (edge init, PBX_EDGE_*). " +
    "A running `serve` deploys the moved orgs and pushes the edge.";
  static override examples = [
    "<%= config.bin %> <%= command.id %> orgs --dry-run",
    "<%= config.bin %> <%= command.id %> orgs/acme.yaml --prune",
    "<%= config.bin %> <%= command.id %> orgs --changed-since $BEFORE",
    "<%= config.bin %> <%= command.id %> orgs --nodes nodes.yaml",
  ];
  static override args = {
    paths: Args.string({
      description: "Org files (*.yaml) or directories of them; several may be given.",
    }),
  };
  static override strict = false;
  static override flags = {
    prune: Flags.boolean({
      default: false,
      summary:
        "Delete what the file no longer has (users, queues, IVRs, trunks, routes; DIDs are released).",
    }),
    "dry-run": Flags.boolean({
      default: false,
      summary: "Print what would change; change nothing.",
    }),
    "changed-since": Flags.string({
      summary: "Apply only the org files added or changed since this git revision.",
    }),
    deploy: Flags.boolean({
      default: true,
      allowNo: true,
      summary:
        "Deploy the applied orgs (diff-aware) into the engine directory (--no-deploy: store only).",
    }),
    engine: Flags.option({
      options: ENGINE_KINDS,
      env: "PBX_ENGINE",
      default: "none" as const,
      summary: "Engine to reload: ami (PBX_AMI_* variables) or none (files only).",
    })(),
    "data-dir": Flags.directory({
      summary: "Data directory holding the store (env PBX_DATA_DIR, default ./var).",
    }),
    ...cacheFlag,
    ...nodesFlag,
  };

  async run(): Promise<ApplyCommandResult> {
    const { argv, flags } = await this.parse(Apply);
    const paths = argv as string[];
    const dryRun = flags["dry-run"];
    let files = paths;
    if (flags["changed-since"] !== undefined) {
      files = await orgFilesChangedSince(paths, flags["changed-since"]).catch((error: unknown) => {
        if (error instanceof NoStoreError) throw new CommandFailure(error.message);
        throw error;
      });
      if (files.length === 0) {
        if (!this.jsonEnabled()) this.log(`no org file changed since ${flags["changed-since"]}`);
        return { dryRun, files, orgs: [], failures: [], gateway: null };
      }
    } else if (paths.length === 0) {
      throw new CommandFailure("give org files or directories, or --changed-since <rev>");
    }
    const report = (r: { diagnostics: Parameters<PbxCommand["printDiagnostics"]>[0] }) =>
      this.printDiagnostics(r.diagnostics);
    const cache = { cache: flags.cache };
    // Only the changed files are parsed and applied; the checks across files still see every
    // org file in scope, through the others' cached summaries.
    const orgs =
      flags["changed-since"] === undefined
        ? await loadValidOrgs(files, process.env, report, cache)
        : await loadChangedOrgs(
            paths.length > 0 ? paths : ["."],
            files,
            process.env,
            report,
            cache,
          );

    // Checked before anything is written: a nodes file with an error applies nothing at all.
    const nodesFile = flags.nodes
      ? await readNodesFile(flags.nodes, (d) => this.printDiagnostics(d))
      : null;
    const store = await openDataStore(process.env, flags["data-dir"], { create: true });
    try {
      if (nodesFile) await this.nodeStep(() => storedNodesOf(store, nodesFile));
      const { results, failures } = await applyOrgFiles(store.db, orgs, {
        prune: flags.prune,
        dryRun,
        serverKey: store.serverKey,
        // The server's policy for webhook targets, so what the server accepts (and export
        // wrote) applies again.
        webhookUrlPolicy: { allowPrivate: webhookAllowPrivateFrom(process.env) },
        // Each changed org's audit record (issue 16), in that org's transaction.
        audit: applyAuditRun(systemClock(), flags.deploy),
      });
      const outcome: ApplyCommandResult = { dryRun, files, orgs: results, failures, gateway: null };
      if (!this.jsonEnabled()) this.printPlan(outcome);
      if (nodesFile) {
        const deps = { db: store.db, config: { serverKey: store.serverKey }, clock: systemClock };
        const changes = await this.nodeStep(() => planNodesFile(deps, nodesFile));
        if (!dryRun) await this.nodeStep(() => applyNodesChanges(deps, changes));
        outcome.nodes = changes;
        if (!this.jsonEnabled()) this.printNodes(flags.nodes!, changes, dryRun);
      }

      // Unchanged orgs are deployed too (diff-aware, so a no-op when live): an org saved but
      // not live yet is brought live by applying its unchanged file.
      if (!dryRun && flags.deploy && results.length > 0) {
        await this.deploy(outcome, store, flags.engine);
      }
      const deployFailed = outcome.orgs.some(
        (o) => o.deploy?.result === "failed" || o.deploy?.error !== undefined,
      );
      const code = failures.length > 0 || deployFailed ? ExitCode.error : ExitCode.ok;
      return this.finish(outcome, code);
    } finally {
      await store.db.destroy();
    }
  }

  private async deploy(
    outcome: ApplyCommandResult,
    store: Awaited<ReturnType<typeof openDataStore>>,
    engineKind: EngineKind,
  ): Promise<void> {
    let deployed: Awaited<ReturnType<typeof deployAppliedToEngine>>;
    try {
      // Loaded only to deploy: `--dry-run` and `--no-deploy` never load the deployer and engines.
      const { deployAppliedToEngine } = await import("../../domain/config/engine-deploys.js");
      deployed = await deployAppliedToEngine(store, process.env, engineKind, outcome.orgs);
    } catch (error) {
      if (error instanceof EngineConfigError) throw new CommandFailure(error.message);
      if (error instanceof EngineUnavailableError) {
        // The store already holds what was applied: the server's next start deploys it.
        throw new CommandFailure(`applied to the store, not deployed: ${error.message}`);
      }
      throw error;
    }
    for (const entry of deployed.orgs) {
      const org = outcome.orgs.find((o) => o.orgId === entry.orgId)!;
      org.deploy = entry.deploy;
      const d = entry.deploy;
      if (!this.jsonEnabled() && d.result !== "unchanged") {
        this.log(
          `deployed ${org.name}: ${d.result} ${d.revision.slice(0, 12)}` +
            (d.reloads.length > 0 ? `, reloads: ${d.reloads.join(", ")}` : "") +
            (d.error ? `, error: ${d.error}` : ""),
        );
      }
    }
    if (deployed.gateway) {
      outcome.gateway = deployed.gateway;
      if (!this.jsonEnabled()) this.log(`gateway: ${deployed.gateway.result}`);
    }
  }

  /** Runs a nodes-file step; the store's refusals (unknown node, full node, ...) are its message. */
  private async nodeStep<T>(step: () => Promise<T>): Promise<T> {
    try {
      return await step();
    } catch (error) {
      if (isDomainError(error)) throw new CommandFailure(`--nodes: ${error.message}`);
      throw error;
    }
  }

  private printNodes(file: string, changes: readonly NodesChange[], dryRun: boolean): void {
    if (changes.length === 0) {
      this.log(`${file}: no change to nodes or placements`);
      return;
    }
    this.log(
      `${file}: ${dryRun ? "would change" : "changed"} ${changes.length} node(s) or placement(s)`,
    );
    for (const change of changes) {
      if (change.kind === "node") {
        const fields = Object.entries(change.fields).map(([k, v]) => `${k} ${v}`);
        this.log(`  ~ node ${change.node}: ${fields.join(", ")}`);
      } else {
        const standby = change.standby_node ? `, standby ${change.standby_node}` : ", no standby";
        this.log(`  ~ placement ${change.org_id}: ${change.node}${standby}`);
      }
    }
  }

  private printPlan(outcome: ApplyCommandResult): void {
    const verb = outcome.dryRun ? "would change" : "changed";
    for (const org of outcome.orgs) {
      if (org.changes.length === 0) this.log(`${org.file}: ${org.name}: no change`);
      else this.log(`${org.file}: ${org.name}: ${verb} ${org.changes.length} resource(s)`);
      for (const c of org.changes) this.log(`  ${SIGN[c.action]} ${c.kind} ${c.key} (${c.action})`);
      if (outcome.dryRun && org.changes.length > 0) {
        this.log(formatImpact([org.impact]).replace(/^/gm, "  "));
      }
      if (org.kept.length > 0) {
        this.log(
          `  kept (not in the file; --prune deletes them): ${org.kept.map((c) => `${c.kind} ${c.key}`).join(", ")}`,
        );
      }
    }
    for (const failure of outcome.failures) {
      this.logToStderr(`${failure.file}: not applied: ${failure.error}`);
    }
    if (outcome.dryRun) this.log("dry run: nothing was written");
  }
}
