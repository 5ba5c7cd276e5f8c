// The shared pool of numbers (SPEC.md §3 DID rows): an admin adds numbers (`available`), an org
// requests one (the number becomes `pending`, the request `pending`), the admin approves (the
// number is `assigned` to the org, and becomes its default when it has none) or rejects (the
// number is `available` again). The sentinel is `reserved` and can never be requested.
import { randomUUID } from "node:crypto";
import type { Did, RoutingEnvironment } from "../../model/org-state.js";
import type {
  DidRecord,
  DidRequestStatus,
  DidRequestView,
  DidView,
} from "../../model/routing-views.js";
import { validateOrg } from "../../model/validate.js";
import { isUniqueViolation } from "../../store/constraint-errors.js";
import {
  createDidRepository,
  type DidColumns,
  RELEASED_TO_POOL,
} from "../../store/did-repository.js";
import { createDidRequestRepository } from "../../store/did-request-repository.js";
import { loadOrgState } from "../../store/load-org-state.js";
import type { OrgPrincipal } from "../access/principal.js";
import { changeOrgConfig, notifyConfigChanged } from "../config/config-change.js";
import type { DomainDeps } from "../deps.js";
import { BadRequest, Conflict, NotFound } from "../errors.js";
import {
  assertDidValid,
  assertNumberFree,
  findOwnDid,
  isSentinel,
  normalizeDidNumber,
  SENTINEL_MESSAGE,
} from "./dids.js";

async function findDid(deps: DomainDeps, id: string): Promise<DidRecord> {
  const row = await createDidRepository(deps.db).findById(id);
  if (!row) throw new NotFound("DID not found");
  return row;
}

/**
 * `POST /did-pool/admin`: adds a number to the pool, `available` (the sentinel is stored
 * `reserved`, never offered). 409 when the number exists in any form.
 */
export async function addPoolDid(
  deps: DomainDeps,
  input: { number: string; status?: Did["status"]; routing_environment?: RoutingEnvironment },
): Promise<DidView> {
  const number = normalizeDidNumber(input.number);
  const id = randomUUID();
  try {
    await deps.db.transaction().execute(async (trx) => {
      await assertNumberFree(trx, number);
      await createDidRepository(trx, deps.clock).insert(null, {
        id,
        number,
        status: input.status ?? "active",
        pool_status: isSentinel(number) ? "reserved" : "available",
        is_default: false,
        routing_type: null,
        routing_destination: null,
        routing_environment: input.routing_environment ?? "prod",
      });
    });
  } catch (error) {
    if (isUniqueViolation(error)) throw new Conflict(`DID ${number} already exists`);
    throw error;
  }
  return findDid(deps, id);
}

/** `GET /did-pool/admin`: every number (pool and assigned), optionally of one pool status. */
export async function listAllDids(
  deps: DomainDeps,
  poolStatus?: Did["pool_status"],
): Promise<DidView[]> {
  return createDidRepository(deps.db).listAll(poolStatus);
}

/** `GET /did-pool/available`: unassigned, active numbers an org may request. */
export async function listAvailableDids(deps: DomainDeps): Promise<DidView[]> {
  const rows = await createDidRepository(deps.db).listUnassigned("available");
  return rows.filter((r) => r.status === "active");
}

/**
 * `PUT /did-pool/admin/{id}`: routing_environment and status of any number; pool_status only
 * between `available` and `reserved` on unassigned numbers (the sentinel stays `reserved`).
 * A change to an assigned number schedules its org's deploy (and so the gateway).
 */
export async function adminUpdateDid(
  deps: DomainDeps,
  id: string,
  patch: {
    routing_environment?: RoutingEnvironment;
    status?: Did["status"];
    pool_status?: "available" | "reserved";
  },
): Promise<DidView> {
  const row = await deps.db.transaction().execute(async (trx) => {
    const repo = createDidRepository(trx, deps.clock);
    const current = await repo.findById(id);
    if (!current) throw new NotFound("DID not found");
    if (patch.pool_status !== undefined && patch.pool_status !== current.pool_status) {
      if (current.org_id !== null || current.pool_status === "pending") {
        throw new Conflict(
          `DID ${current.number} is ${current.pool_status}; only unassigned numbers move between available and reserved`,
        );
      }
      if (isSentinel(current.number))
        throw new BadRequest(`${SENTINEL_MESSAGE}; it stays reserved`);
    }
    const update: DidColumns = {};
    if (patch.routing_environment !== undefined) {
      update.routing_environment = patch.routing_environment;
    }
    if (patch.status !== undefined) update.status = patch.status;
    if (patch.pool_status !== undefined) update.pool_status = patch.pool_status;
    await repo.update(id, update, deps.clock().toISOString());
    return current;
  });
  if (row.org_id !== null) await notifyConfigChanged(deps, row.org_id);
  return findDid(deps, id);
}

function requesterOf(principal: OrgPrincipal): string {
  if (principal.userId) return `user:${principal.userId}`;
  if (principal.apiKeyId) return `api_key:${principal.apiKeyId}`;
  return principal.via;
}

/** 409 of a pool request for a number that is not (or no longer) available. */
export const DID_NOT_AVAILABLE = "DID is not available";

/** `POST /did-pool/{id}/request`: the org asks for an available number; 409 when it is not. */
export async function requestPoolDid(
  deps: DomainDeps,
  principal: OrgPrincipal,
  didId: string,
): Promise<DidRequestView> {
  const id = randomUUID();
  try {
    await deps.db.transaction().execute(async (trx) => {
      const repo = createDidRepository(trx, deps.clock);
      const did = await repo.findById(didId);
      if (!did) throw new NotFound("DID not found");
      if (did.org_id !== null || did.pool_status !== "available" || did.status !== "active") {
        // Never the number: an org may not learn which numbers other orgs hold.
        throw new Conflict(DID_NOT_AVAILABLE);
      }
      const now = deps.clock().toISOString();
      await repo.update(didId, { pool_status: "pending" }, now);
      await createDidRequestRepository(trx).insert({
        id,
        did_id: didId,
        org_id: principal.orgId,
        status: "pending",
        requested_by: requesterOf(principal),
        created_at: now,
        decided_at: null,
      });
    });
  } catch (error) {
    if (isUniqueViolation(error)) throw new Conflict(DID_NOT_AVAILABLE);
    throw error;
  }
  return getRequest(deps, id);
}

async function getRequest(deps: DomainDeps, id: string): Promise<DidRequestView> {
  const row = await createDidRequestRepository(deps.db).findById(id);
  if (!row) throw new NotFound("DID request not found");
  return row;
}

/** `GET /did-pool/requests`: the org's own requests, oldest first. */
export async function listOwnDidRequests(
  deps: DomainDeps,
  orgId: string,
): Promise<DidRequestView[]> {
  return await createDidRequestRepository(deps.db).list({ orgId });
}

/** `GET /did-pool/admin/requests`: every request (or those of one status), oldest first. */
export async function listDidRequests(
  deps: DomainDeps,
  status?: DidRequestStatus,
): Promise<DidRequestView[]> {
  const filter = status === undefined ? {} : { status };
  return await createDidRequestRepository(deps.db).list(filter);
}

async function pendingRequest(deps: DomainDeps, id: string): Promise<DidRequestView> {
  const request = await createDidRequestRepository(deps.db).findById(id);
  if (!request) throw new NotFound("DID request not found");
  if (request.status !== "pending") {
    throw new Conflict(`DID request is already ${request.status}`);
  }
  return request;
}

/**
 * `POST /did-pool/admin/requests/{id}/approve`: assigns the number to the requesting org in one
 * transaction; it becomes the org's default when the org has none (so an org's first DID is its
 * default). Then the org's deploy is scheduled (the gateway follows its DIDs).
 */
export async function approveDidRequest(deps: DomainDeps, id: string): Promise<DidRequestView> {
  const request = await pendingRequest(deps, id);
  await changeOrgConfig(deps, request.org_id, async (trx) => {
    const now = deps.clock().toISOString();
    if (!(await createDidRequestRepository(trx).decide(id, "approved", now))) {
      throw new Conflict("DID request is no longer pending");
    }
    const repo = createDidRepository(trx, deps.clock);
    const row = await repo.findById(request.did_id);
    if (!row || row.org_id !== null || row.pool_status !== "pending") {
      throw new Conflict(`DID ${request.number} is no longer waiting for this request`);
    }
    const state = await loadOrgState(trx, request.org_id);
    const did: Did = {
      id: row.id,
      number: row.number,
      status: row.status as Did["status"],
      pool_status: "assigned",
      is_default: !state.dids.some((d) => d.is_default),
      routing_type: null,
      routing_destination: null,
      routing_environment: row.routing_environment as RoutingEnvironment,
    };
    assertDidValid(state, did);
    await repo.update(
      row.id,
      { org_id: request.org_id, pool_status: "assigned", is_default: did.is_default ? 1 : 0 },
      now,
    );
  });
  return getRequest(deps, id);
}

/** `POST /did-pool/admin/requests/{id}/reject`: the number goes back to `available`. */
export async function rejectDidRequest(deps: DomainDeps, id: string): Promise<DidRequestView> {
  const request = await pendingRequest(deps, id);
  await deps.db.transaction().execute(async (trx) => {
    const now = deps.clock().toISOString();
    if (!(await createDidRequestRepository(trx).decide(id, "rejected", now))) {
      throw new Conflict("DID request is no longer pending");
    }
    const repo = createDidRepository(trx, deps.clock);
    const row = await repo.findById(request.did_id);
    if (row && row.org_id === null && row.pool_status === "pending") {
      await repo.update(row.id, { pool_status: "available" }, now);
    }
  });
  return getRequest(deps, id);
}

/**
 * `POST /did-pool/{id}/set-default`: `is_default` on this number and cleared on every other
 * number of the org, in one transaction (a partial unique index keeps it to one per org even
 * under concurrency); then the org's configuration is regenerated.
 */
export async function setDefaultDid(deps: DomainDeps, orgId: string, id: string): Promise<DidView> {
  await changeOrgConfig(deps, orgId, async (trx) => {
    const row = await findOwnDid(trx, orgId, id);
    if (row.pool_status !== "assigned") {
      throw new Conflict(`DID ${row.number} is not assigned to this organization`);
    }
    const now = deps.clock().toISOString();
    const repo = createDidRepository(trx, deps.clock);
    await repo.clearDefaults(orgId, now, id);
    await repo.update(id, { is_default: 1 }, now);
  });
  return findDid(deps, id);
}

/**
 * `DELETE /dids/{id}`: the org releases a number back to the pool at once (no admin approval: the
 * number leaves the org, it gains nothing). Refused with 409 when the org still relies on it (a
 * user's outbound caller ID, say): the org as it would be must pass the same rules as any save.
 * A released default hands the default to the org's lowest remaining number. The number becomes
 * `available` and unrouted; the org's deploy (and so the gateway) is scheduled.
 */
export async function releaseDid(deps: DomainDeps, orgId: string, id: string): Promise<void> {
  await changeOrgConfig(deps, orgId, async (trx) => {
    const row = await findOwnDid(trx, orgId, id);
    const state = await loadOrgState(trx, orgId);
    const remaining = state.dids.filter((did) => did.id !== id);
    const problems = validateOrg({ ...state, dids: remaining }).filter(
      (d) => d.severity === "error",
    );
    if (problems.length > 0) {
      throw new Conflict(
        `DID ${row.number} is still in use: ${problems.map((d) => `${d.path}: ${d.message}`).join("; ")}`,
      );
    }
    const now = deps.clock().toISOString();
    const repo = createDidRepository(trx, deps.clock);
    // The org's own number was never the platform's: it goes, it does not join the pool.
    if (row.source === "org") await repo.delete(id);
    else await repo.update(id, RELEASED_TO_POOL, now);
    const next = remaining
      .filter((did) => did.pool_status === "assigned")
      .sort((a, b) => (a.number < b.number ? -1 : 1))[0];
    if (row.is_default && next?.id) await repo.update(next.id, { is_default: 1 }, now);
  });
}
