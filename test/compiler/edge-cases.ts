// The edge's golden cases (issue 26): every engine case of fixtures/ with all its orgs on one node
// (output in fixtures/<case>/edge/), and the edge's own cases in fixtures/edge/<case>/ (input.yaml
// plus edge.yaml: nodes, placements by org id, gateway carriers; output in expected/).
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { parse } from "yaml";
import {
  compileEdge,
  type EdgeListen,
  type EdgeNode,
  type EdgePlacement,
  edgeStateFromOrgs,
} from "../../src/compiler/edge/index.js";
import type { CompileResult } from "../../src/compiler/index.js";
import { FIXTURES, listCases, loadCase } from "./golden.js";

export const EDGE_FIXTURES = join(FIXTURES, "edge");

/** The listen settings every golden case is compiled with. */
export const GOLDEN_LISTEN: EdgeListen = {
  sip_address: "127.0.0.10",
  sip_port: 5060,
  rpc_port: 5081,
  data_dir: "/etc/kamailio/pbxctl",
  probe_interval: 10,
};

/** Engine cases (all orgs on `node-1`, the gateway's carrier 192.0.2.10) then `edge/<case>`s. */
export function listEdgeCases(): string[] {
  const own = readdirSync(EDGE_FIXTURES)
    .filter((name) => existsSync(join(EDGE_FIXTURES, name, "edge.yaml")))
    .sort()
    .map((name) => `edge/${name}`);
  return [...listCases(), ...own];
}

interface EdgeYaml {
  nodes: EdgeNode[];
  placements: Record<string, EdgePlacement>;
  carriers?: string[];
}

export function compileEdgeCase(name: string, listen: EdgeListen = GOLDEN_LISTEN): CompileResult {
  const { orgs } = loadCase(name);
  const edgeFile = join(FIXTURES, name, "edge.yaml");
  const edge: EdgeYaml = existsSync(edgeFile)
    ? parse(readFileSync(edgeFile, "utf8"))
    : {
        nodes: [{ name: "node-1", sip_address: "127.0.0.11:5060", state: "active" }],
        placements: Object.fromEntries(orgs.map((org) => [org.org.id, { node: "node-1" }])),
        carriers: ["192.0.2.10"],
      };
  return compileEdge(
    edgeStateFromOrgs(
      orgs,
      new Map(Object.entries(edge.placements)),
      edge.nodes,
      listen,
      edge.carriers ?? [],
    ),
  );
}

/** Where a case's expected edge tree lives, relative to its case directory. */
export function edgeTree(name: string): "edge" | "expected" {
  return name.startsWith("edge/") ? "expected" : "edge";
}
