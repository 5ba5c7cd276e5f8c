// Outbound routes of an org (`/outbound-routes`): dial patterns sent through one of the org's
// trunks, with digit stripping, a prefix and an optional caller ID override. Routes are tried in
// the order they were created.
import { randomUUID } from "node:crypto";
import { withDefaults } from "../../model/defaults.js";
import { type OrgState, OutboundRoute } from "../../model/org-state.js";
import { findTrunk } from "../../model/refs.js";
import type { Db } from "../../store/database.js";
import { loadOrgState } from "../../store/load-org-state.js";
import { createOutboundRouteRepository } from "../../store/outbound-route-repository.js";
import { changeOrgConfig } from "../config/config-change.js";
import { assertValidAt } from "../config/config-validation.js";
import type { DomainDeps } from "../deps.js";
import { BadRequest } from "../errors.js";
import { ownRow } from "../tenant-rows.js";

export interface OutboundRouteView {
  id: string;
  name: string;
  patterns: string[];
  /** The trunk's name. */
  trunk: string;
  trunk_id: string;
  strip_digits: number;
  prepend_digits: string;
  caller_id_override: string | null;
}

export interface OutboundRouteInput {
  name?: string;
  patterns?: string[];
  /** A trunk of the org, by name or id. */
  trunk?: string;
  strip_digits?: number;
  prepend_digits?: string;
  caller_id_override?: string | null;
}

function routeView(state: OrgState, route: OutboundRoute & { id: string }): OutboundRouteView {
  return {
    id: route.id,
    name: route.name,
    patterns: route.patterns,
    trunk: route.trunk,
    trunk_id: findTrunk(state, route.trunk)?.id ?? "",
    strip_digits: route.strip_digits,
    prepend_digits: route.prepend_digits,
    caller_id_override: route.caller_id_override,
  };
}

async function findOwnRoute(
  db: Db,
  orgId: string,
  id: string,
): Promise<OutboundRoute & { id: string }> {
  const found = await createOutboundRouteRepository(db).findById(id);
  return ownRow(found, orgId, "Outbound route not found").route;
}

function merge(state: OrgState, base: OutboundRoute, input: OutboundRouteInput): OutboundRoute {
  const route: OutboundRoute = { ...base };
  if (input.name !== undefined) route.name = input.name;
  if (input.patterns !== undefined) route.patterns = input.patterns;
  if (input.strip_digits !== undefined) route.strip_digits = input.strip_digits;
  if (input.prepend_digits !== undefined) route.prepend_digits = input.prepend_digits;
  if (input.caller_id_override !== undefined) route.caller_id_override = input.caller_id_override;
  if (input.trunk !== undefined) {
    const trunk = findTrunk(state, input.trunk);
    if (!trunk) throw new BadRequest(`Trunk ${input.trunk} not found in this organization`);
    route.trunk = trunk.name;
  }
  return route;
}

// Runs the model's rules on the org as it would be (duplicate patterns across routes, trunk).
function assertRouteValid(state: OrgState, route: OutboundRoute & { id: string }): void {
  const index = state.outbound_routes.findIndex((r) => r.id === route.id);
  const routes = [...state.outbound_routes];
  if (index === -1) routes.push(route);
  else routes[index] = route;
  assertValidAt(
    { ...state, outbound_routes: routes },
    `outbound_routes[${index === -1 ? routes.length - 1 : index}]`,
  );
}

/** `GET /outbound-routes`: the org's routes in match order. */
export async function listOutboundRoutes(
  deps: DomainDeps,
  orgId: string,
): Promise<OutboundRouteView[]> {
  const state = await loadOrgState(deps.db, orgId);
  return state.outbound_routes.map((r) => routeView(state, { ...r, id: r.id ?? "" }));
}

/** `GET /outbound-routes/{id}`. */
export async function getOutboundRoute(
  deps: DomainDeps,
  orgId: string,
  id: string,
): Promise<OutboundRouteView> {
  const route = await findOwnRoute(deps.db, orgId, id);
  return routeView(await loadOrgState(deps.db, orgId), route);
}

/** `POST /outbound-routes`: appended after the org's routes; the trunk must exist. */
export async function createOutboundRoute(
  deps: DomainDeps,
  orgId: string,
  input: OutboundRouteInput & { name: string; patterns: string[]; trunk: string },
): Promise<OutboundRouteView> {
  const id = randomUUID();
  await changeOrgConfig(deps, orgId, async (trx) => {
    const state = await loadOrgState(trx, orgId);
    const base = withDefaults(OutboundRoute, {
      name: input.name,
      patterns: input.patterns,
      trunk: input.trunk,
    });
    const route = { ...merge(state, base, input), id };
    assertRouteValid(state, route);
    await createOutboundRouteRepository(trx, deps.clock).insert(orgId, route);
  });
  return getOutboundRoute(deps, orgId, id);
}

/** `PUT /outbound-routes/{id}`: partial; `patterns`, when given, replace the list. */
export async function updateOutboundRoute(
  deps: DomainDeps,
  orgId: string,
  id: string,
  input: OutboundRouteInput,
): Promise<OutboundRouteView> {
  await changeOrgConfig(deps, orgId, async (trx) => {
    const current = await findOwnRoute(trx, orgId, id);
    const state = await loadOrgState(trx, orgId);
    const route = { ...merge(state, current, input), id };
    assertRouteValid(state, route);
    await createOutboundRouteRepository(trx, deps.clock).replace(orgId, id, route);
  });
  return getOutboundRoute(deps, orgId, id);
}

/** `DELETE /outbound-routes/{id}`. */
export async function deleteOutboundRoute(
  deps: DomainDeps,
  orgId: string,
  id: string,
): Promise<void> {
  await changeOrgConfig(deps, orgId, async (trx) => {
    await findOwnRoute(trx, orgId, id);
    await createOutboundRouteRepository(trx, deps.clock).delete(id);
  });
}
