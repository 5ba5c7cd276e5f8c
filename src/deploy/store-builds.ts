// What the server deploys, built from the store: one org's files (with the top-level include
// files that list every active org), the gateway, and the set of active orgs. Suspended,
// inactive and pending orgs compile to no files at all: SPEC.md says they fail authentication,
// and removing their dialplan and endpoints makes their calls stop too.
import {
  type CompiledFile,
  type CompileResult,
  compileGateway,
  compileOrg,
  compileTopLevel,
  type OrgCompileOptions,
  type TopLevelOptions,
} from "../compiler/index.js";
import { compileOrgPjsipRealtime, type RealtimeRow } from "../compiler/pjsip-realtime.js";
import type { GatewayOptions } from "../model/gateway.js";
import type { OrgState } from "../model/org-state.js";
import { isUsableDid } from "../model/refs.js";
import type { OrgHandleRecord } from "../model/stored-records.js";
import { refusedNumbers } from "../store/consent-repository.js";
import { stagingTunnelOf } from "../store/customer-tunnel-repository.js";
import type { Db } from "../store/database.js";
import {
  isOnNode,
  orgHandlesOnNode,
  orgIdsOnNode,
  servedPrefixesOnNode,
} from "../store/engine-node-repository.js";
import { loadGatewayState } from "../store/load-gateway-state.js";
import { loadOrgPjsipState, loadOrgState } from "../store/load-org-state.js";
import { createOrganizationRepository, isServed } from "../store/organization-repository.js";
import { mohFileNames } from "./moh-files.js";
import type { OrgBuild } from "./scheduler.js";

/** The compiler refused an org's (or the gateway's) configuration; nothing was deployed. */
export class CompileRefusedError extends Error {
  override readonly name = "CompileRefusedError";
}

export interface StoreBuildOptions {
  db: Db;
  gateway: GatewayOptions;
  topLevel?: TopLevelOptions;
  /**
   * Sounds directory (PBX_SOUNDS_DIR): each org's music-on-hold files are listed from
   * `<sounds>/moh/<org id>/`. Absent: no org has music of its own.
   */
  soundsDir?: string;
  /**
   * PBX_PJSIP: `realtime` keeps endpoints, auths and AORs out of the org's pjsip.conf (they are
   * rows, `orgPjsipRows`); the file keeps what must stay a file (trunks' identify). Default `file`.
   */
  pjsip?: "file" | "realtime";
  /**
   * The builds of one engine node (issue 25, docs/nodes.md): only the orgs it holds (as primary
   * or as warm standby) get files, an include line and gateway routes; any other org builds to
   * nothing here, so a deploy removes it from this node. Absent: every org (the one implicit
   * engine).
   */
  nodeId?: string;
  /**
   * Phones register through the SIP edge (PBX_EDGE_DIR): their AORs say `support_path=yes`, in
   * files and realtime rows alike. Default false.
   */
  behindEdge?: boolean;
}

/** The gateway's files with what they route. */
export interface GatewayBuild {
  files: CompiledFile[];
  didCount: number;
  orgCount: number;
}

export { isServed };

/** Builds deployable file sets from the store; every call reads the store afresh. */
export class StoreBuilds {
  constructor(private readonly options: StoreBuildOptions) {}

  /** Every org's (this node's orgs') id, prefix and status (one query, no org is loaded). */
  async orgs(): Promise<OrgHandleRecord[]> {
    const nodeId = this.options.nodeId;
    return nodeId === undefined
      ? createOrganizationRepository(this.options.db).listHandles()
      : orgHandlesOnNode(this.options.db, nodeId);
  }

  /** The org, or null when no such org exists. */
  async org(orgId: string): Promise<OrgHandleRecord | null> {
    return (await createOrganizationRepository(this.options.db).findHandle(orgId)) ?? null;
  }

  private compileOptions(): OrgCompileOptions {
    return { behindEdge: this.options.behindEdge ?? false };
  }

  /** Whether the org's config belongs on this engine: always, unless builds are per node. */
  private async onThisEngine(orgId: string): Promise<boolean> {
    const nodeId = this.options.nodeId;
    return nodeId === undefined || isOnNode(this.options.db, orgId, nodeId);
  }

  /** The top-level include files naming every active org (one cheap query). */
  async topLevelFiles(): Promise<CompiledFile[]> {
    const nodeId = this.options.nodeId;
    const prefixes =
      nodeId === undefined
        ? await createOrganizationRepository(this.options.db).listServedContextPrefixes()
        : await servedPrefixesOnNode(this.options.db, nodeId);
    return compileTopLevel(prefixes, this.options.topLevel).files;
  }

  /**
   * The org's own files: compiled when it is active (and placed on this node, for a node's
   * builds), none otherwise. Throws CompileRefusedError.
   */
  async orgFiles(orgId: string): Promise<{ state: OrgState; files: CompiledFile[] }> {
    const state = await loadOrgState(this.options.db, orgId);
    if (!isServed(state.org.status) || !(await this.onThisEngine(orgId))) {
      return { state, files: [] };
    }
    if (this.options.soundsDir !== undefined) {
      state.music_on_hold = await mohFileNames(this.options.soundsDir, orgId);
    }
    // Recording consent (issue 16) is store data, not configuration: added here like the music.
    const refused = await refusedNumbers(this.options.db, orgId);
    if (refused.length > 0) state.recording_consent_refused = refused;
    const compileOptions = this.compileOptions();
    const files = refuseOnErrors(`org ${orgId}`, compileOrg(state, compileOptions));
    if (this.options.pjsip !== "realtime") return { state, files };
    const identifyOnly = compileOrgPjsipRealtime(state, compileOptions).file;
    return { state, files: files.map((f) => (f.path === identifyOnly.path ? identifyOnly : f)) };
  }

  /**
   * Realtime PJSIP: the org's prefix and its rows (endpoints, auths, AORs, registrations), none
   * when it is not served; null when the org does not exist. Throws CompileRefusedError.
   */
  async orgPjsipRows(orgId: string): Promise<{ prefix: string; rows: RealtimeRow[] } | null> {
    // Only what the PJSIP objects are compiled from (the org, its users and trunks, one round
    // of queries): this runs on every save, outside the debounce, and its round trips are most
    // of a new user's time to registrable on a busy store.
    const state = await loadOrgPjsipState(this.options.db, orgId);
    if (!state) return null;
    const prefix = state.org.context_prefix;
    if (!isServed(state.org.status)) return { prefix, rows: [] };
    // PJSIP the compiler refuses leaves the rows as they are. The rest of the org (dialplan,
    // queues) is the debounced file deploy's, refused there as in file mode.
    const compiled = compileOrgPjsipRealtime(state, this.compileOptions());
    const errors = compiled.diagnostics.filter((d) => d.severity === "error");
    if (errors.length > 0) {
      const lines = errors.map((d) => `${d.path}: ${d.message}`).join("; ");
      throw new CompileRefusedError(`the compiler refused org ${orgId}'s PJSIP: ${lines}`);
    }
    return { prefix, rows: compiled.rows };
  }

  /**
   * The scheduler's build of an org: its files plus the top-level files (deployed in the same
   * batch, so an org and the include line naming it go live together), and its routed DIDs.
   * Null when the org does not exist.
   */
  async orgBuild(orgId: string): Promise<OrgBuild | null> {
    const handle = await this.org(orgId);
    if (!handle) return null;
    const [{ state, files }, top] = await Promise.all([this.orgFiles(orgId), this.topLevelFiles()]);
    const served = isServed(state.org.status) && (await this.onThisEngine(orgId));
    // Where the org's staging DIDs go is part of what the gateway routes: a staging tunnel
    // marked, moved or removed regenerates it like a DID change does.
    const tunnel = await stagingTunnelOf(this.options.db, orgId);
    return {
      contextPrefix: state.org.context_prefix,
      files: [...files, ...top],
      dids: served
        ? [
            ...state.dids
              .filter(isUsableDid)
              .map((did) => `${did.number}@${did.routing_environment}`),
            ...(tunnel
              ? [`staging-tunnel@${tunnel.customer_address}:${tunnel.staging_sip_port}`]
              : []),
          ]
        : [],
    };
  }

  /**
   * The gateway dispatcher over every assigned, active DID of every active org (of the orgs
   * this node holds, for a node's builds: a DID is dispatched only where its org lives, its
   * standby included, so a carrier's call the edge fails over finds its route there).
   */
  async gateway(): Promise<GatewayBuild> {
    const state = await loadGatewayState(this.options.db, this.options.gateway);
    const nodeId = this.options.nodeId;
    if (nodeId !== undefined) {
      const here = new Set(await orgIdsOnNode(this.options.db, nodeId));
      state.orgs = state.orgs.filter((org) => here.has(org.org_id));
    }
    return {
      files: refuseOnErrors("the gateway", compileGateway(state)),
      didCount: state.orgs.reduce((sum, org) => sum + org.dids.length, 0),
      orgCount: state.orgs.length,
    };
  }
}

function refuseOnErrors(what: string, result: CompileResult): CompiledFile[] {
  const errors = result.diagnostics.filter((d) => d.severity === "error");
  if (errors.length > 0) {
    const lines = errors.map((d) => `${d.path}: ${d.message}`).join("; ");
    throw new CompileRefusedError(`the compiler refused ${what}: ${lines}`);
  }
  return result.files;
}
