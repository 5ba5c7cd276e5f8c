// What `pbxctl edge init` and `pbxctl edge apply` share: where the edge's files are, how it is
// reached over JSON-RPC, the gateway's carriers, and the edge state of the store.
import { Flags } from "@oclif/core";
import {
  compileEdge,
  EDGE_RELOAD_DELTA_S,
  type EdgeListen,
  EdgeListenError,
  type EdgeState,
} from "../../compiler/edge/index.js";
import type { CompileResult } from "../../compiler/index.js";
import { DEFAULT_EDGE_RPC_PORT } from "../../config.js";
import type { EdgeReloadOptions } from "../../deploy/edge-apply.js";
import { edgeStateFromStore } from "../../domain/nodes/edge.js";
import { CommandFailure } from "./base-command.js";
import { withNodeStore } from "./node-store.js";

export const edgeFlags = {
  dir: Flags.string({
    required: true,
    summary:
      "The edge's directory on this host (absolute): kamailio.cfg and its data files (dispatcher.list, db/).",
  }),
  "rpc-port": Flags.integer({
    default: DEFAULT_EDGE_RPC_PORT,
    min: 1,
    max: 65535,
    summary: "Port of the edge's JSON-RPC over HTTP (bound to 127.0.0.1).",
  }),
  carrier: Flags.string({
    multiple: true,
    summary:
      "IP address or CIDR range the gateway's carrier sends DID calls from (repeatable); trunks' identify matches are added.",
  }),
};

/** The edge state of the store of `dataDir`. */
export function storeEdgeState(
  dataDir: string | undefined,
  listen: EdgeListen,
  carriers: readonly string[],
): Promise<EdgeState> {
  return withNodeStore(dataDir, (deps) => edgeStateFromStore(deps.db, listen, carriers));
}

/** The store's edge compiled with `listen`; a listen setting that cannot be used is one line. */
export async function compileStoreEdge(
  dataDir: string | undefined,
  listen: EdgeListen,
  carriers: readonly string[],
): Promise<ReturnType<typeof compileEdge>> {
  const state = await storeEdgeState(dataDir, listen, carriers);
  try {
    return compileEdge(state);
  } catch (error) {
    if (error instanceof EdgeListenError) throw new CommandFailure(error.message);
    throw error;
  }
}

/** The compile's problems as lines (`error orgs[0].primary: ...`). */
export function edgeDiagnosticLines(result: Pick<CompileResult, "diagnostics">): string[] {
  return result.diagnostics.map((d) => `edge: ${d.severity} ${d.path}: ${d.message}`);
}

/** Said on stderr when a reload is refused as rate-limited, so the pause that follows is explained. */
export const sayReloadWait =
  (say: (line: string) => void): EdgeReloadOptions["onWait"] =>
  ({ method, ms }) =>
    say(
      `edge: ${method} refused: Kamailio allows one reload per ${EDGE_RELOAD_DELTA_S} s; retrying in ${(ms / 1000).toFixed(2)} s`,
    );
