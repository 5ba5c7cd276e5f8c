// Call-flow questions about an org: "what happens when someone calls this number?" and "what
// does the call graph look like?". The answers come from the pure compiler modules, over the
// org state the store loads; pictures are rendered here, as the compiler stays dependency-free.
import type { Viz } from "@viz-js/viz";
import type { Clock } from "../../clock.js";
import { buildCallGraph, toDot } from "../../compiler/call-graph.js";
import {
  instantFromText,
  type Simulation,
  type SimulationInput,
  simulateCall,
} from "../../compiler/simulate.js";
import type { OrgState } from "../../model/org-state.js";
import type { Db } from "../../store/database.js";
import { loadOrgState } from "../../store/load-org-state.js";
import { findOrgId } from "../config/export.js";
import { BadRequest } from "../errors.js";

/**
 * When a simulated call is made, in ms: the ISO 8601 time given (`2026-03-27T18:30:00Z`, with
 * its offset), else now; time conditions take the branch their zone's clock shows then.
 */
export function simulationInstant(text: string | undefined, clock: Clock): number {
  if (text === undefined) return clock().getTime();
  const at = instantFromText(text);
  if (at === undefined) {
    throw new BadRequest(
      `at must be an ISO 8601 time with its offset, such as 2026-03-27T18:30:00Z`,
    );
  }
  return at;
}

/** The org named by id or slug, as the compiler sees it; throws NotFound. */
export async function storedOrgState(db: Db, idOrSlug: string): Promise<OrgState> {
  return loadOrgState(db, await findOrgId(db, idOrSlug));
}

/** The caller's own org's call graph as SVG (GET /call-flow.svg). */
export async function ownOrgCallFlowSvg(db: Db, orgId: string): Promise<string> {
  return callFlowSvg(await loadOrgState(db, orgId));
}

/** Simulates one call into the caller's own org (POST /simulate). */
export async function simulateOwnOrgCall(
  db: Db,
  orgId: string,
  input: SimulationInput,
): Promise<Simulation> {
  return simulateCall(await loadOrgState(db, orgId), input);
}

/** The org's call graph as an SVG picture, rendered offline by Graphviz compiled to WASM. */
export async function callFlowSvg(state: OrgState): Promise<string> {
  return renderDotSvg(toDot(buildCallGraph(state)));
}

let viz: Promise<Viz> | undefined;

/**
 * DOT -> SVG. The WASM module ships inside @viz-js/viz (nothing is fetched); loaded once, by the
 * first picture: its 1.2 MB of JavaScript would otherwise be parsed by every `pbxctl serve`
 * before it listens (docs/performance.md, start-up).
 */
export async function renderDotSvg(dot: string): Promise<string> {
  viz ??= import("@viz-js/viz").then(({ instance }) => instance());
  const result = (await viz).render(dot, { format: "svg", engine: "dot" });
  if (result.status !== "success") {
    throw new Error(`graphviz: ${result.errors.map((e) => e.message).join("; ")}`);
  }
  return result.output;
}

/** `1,3` -> the digits of each prompt (the form the CLI's --digits takes). */
export { digitsFromText } from "../../compiler/simulate.js";
