// The Kamailio edge's compiler (issue 26): EdgeState -> kamailio.cfg and its data files, pure and
// deterministic like the engine's compiler (same input, byte-identical files, sorted by path).
// Paths are relative to the edge directory (`edge/` of `pbxctl compile`, the directory of
// `pbxctl edge init`).
import { isIpv4, isIpv6 } from "../../model/wireguard.js";
import type { CompiledFile, CompileResult, Diagnostic } from "../types.js";
import {
  DEFAULT_REGISTER_EXPIRY,
  type EdgeListen,
  type EdgeState,
  MIN_REGISTER_EXPIRY,
} from "./edge-state.js";
import { buildEdgeTables, type EdgeTables } from "./edge-tables.js";
import { KAMAILIO_CFG, printKamailioCfg } from "./kamailio-cfg.js";
import {
  EDGE_DATA_FILES,
  printAddressTable,
  printDispatcherList,
  printHtable,
  printVersionTable,
} from "./print-tables.js";

export type { Diagnostic } from "../types.js";
export {
  DEFAULT_REGISTER_EXPIRY,
  type EdgeListen,
  type EdgeNode,
  type EdgeNodeState,
  type EdgeOrg,
  type EdgePlacement,
  type EdgeState,
  edgeStateFromOrgs,
  MIN_REGISTER_EXPIRY,
} from "./edge-state.js";
export { buildEdgeTables, type EdgeTables } from "./edge-tables.js";
export { EDGE_RELOAD_DELTA_S, KAMAILIO_CFG, KAMAILIO_RUN_FLAGS } from "./kamailio-cfg.js";
export { EDGE_DATA_FILES, EDGE_TABLES } from "./print-tables.js";

/** Thrown for an EdgeListen that cannot be printed safely: the whole config depends on it. */
export class EdgeListenError extends Error {
  override readonly name = "EdgeListenError";
}

const DATA_DIR = /^\/[A-Za-z0-9._/-]{0,200}$/;

/** Refuses listen settings that are not an IP address, a port, a plain absolute path. */
export function checkEdgeListen(listen: EdgeListen): void {
  if (!isIpv4(listen.sip_address) && !isIpv6(listen.sip_address)) {
    throw new EdgeListenError(`edge SIP address ${listen.sip_address} is not an IP address`);
  }
  for (const [name, port] of [
    ["SIP port", listen.sip_port],
    ["RPC port", listen.rpc_port],
  ] as const) {
    if (!Number.isInteger(port) || port < 1 || port > 65535) {
      throw new EdgeListenError(`edge ${name} must be 1-65535`);
    }
  }
  if (listen.rpc_port === listen.sip_port) {
    throw new EdgeListenError("edge RPC port must differ from its SIP port");
  }
  if (!DATA_DIR.test(listen.data_dir) || listen.data_dir.split("/").includes("..")) {
    throw new EdgeListenError(
      `edge data directory ${listen.data_dir} must be an absolute path of letters, digits, ., _, - and /`,
    );
  }
  if (!Number.isInteger(listen.probe_interval) || listen.probe_interval < 1) {
    throw new EdgeListenError("edge probe interval must be a whole number of seconds, at least 1");
  }
  const expiry = listen.register_expiry ?? DEFAULT_REGISTER_EXPIRY;
  if (!Number.isInteger(expiry) || expiry < MIN_REGISTER_EXPIRY || expiry > 86400) {
    throw new EdgeListenError(
      `edge register expiry must be a whole number of seconds, ${MIN_REGISTER_EXPIRY}-86400`,
    );
  }
}

/** The data files only (what a run-time change rewrites), sorted by path. */
export function printEdgeData(tables: EdgeTables): CompiledFile[] {
  return [
    { path: EDGE_DATA_FILES.dispatcher, content: printDispatcherList(tables) },
    { path: EDGE_DATA_FILES.address, content: printAddressTable(tables) },
    { path: EDGE_DATA_FILES.dids, content: printHtable(tables.dids) },
    { path: EDGE_DATA_FILES.orgs, content: printHtable(tables.orgs) },
    { path: EDGE_DATA_FILES.version, content: printVersionTable() },
  ].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

/** kamailio.cfg and every data file of this edge state. */
export function compileEdge(state: EdgeState): CompileResult & { tables: EdgeTables } {
  checkEdgeListen(state.listen);
  const diagnostics: Diagnostic[] = [];
  const tables = buildEdgeTables(state, diagnostics);
  const files: CompiledFile[] = [
    ...printEdgeData(tables),
    {
      path: KAMAILIO_CFG,
      content: printKamailioCfg({
        sipAddress: state.listen.sip_address,
        sipPort: state.listen.sip_port,
        rpcPort: state.listen.rpc_port,
        dataDir: state.listen.data_dir,
        probeInterval: state.listen.probe_interval,
        registerExpiry: state.listen.register_expiry ?? DEFAULT_REGISTER_EXPIRY,
      }),
    },
  ].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  return { files, diagnostics, tables };
}
