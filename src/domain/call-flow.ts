// Call-flow questions about a stored org: "what happens when someone calls this number?"
// The answers come from the pure compiler modules, over the org state the store loads.
import { type Simulation, type SimulationInput, simulateCall } from "../compiler/simulate.js";
import type { OrgState } from "../model/org-state.js";
import type { Db } from "../store/database.js";
import { loadOrgState } from "../store/load-org-state.js";
import { findOrgId } from "./export.js";

/** The org named by id or slug, as the compiler sees it; throws NotFound. */
export async function storedOrgState(db: Db, idOrSlug: string): Promise<OrgState> {
  return loadOrgState(db, await findOrgId(db, idOrSlug));
}

/** Simulates one call into the caller's own org (POST /simulate). */
export async function simulateOwnOrgCall(
  db: Db,
  orgId: string,
  input: SimulationInput,
): Promise<Simulation> {
  return simulateCall(await loadOrgState(db, orgId), input);
}
