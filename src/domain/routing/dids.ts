// An org's phone numbers (`/dids`): listing, adding a number directly, and inbound routing.
// Numbers are kept in the form SPEC.md §2 allows (E.164 with `+`, local 11 digits starting 0, or
// international digits); every way of writing one number counts as the same number.

import { randomUUID } from "node:crypto";
import { withDefaults } from "../../model/defaults.js";
import { DESTINATION_KINDS, DID_ROUTE_KINDS } from "../../model/destinations.js";
import { Did, type OrgState, type RoutingEnvironment } from "../../model/org-state.js";
import { internationalDigits, isIndian, SENTINEL_DID, sameNumber } from "../../model/phone.js";
import type { DidRecord, DidView } from "../../model/routing-views.js";
import { isUniqueViolation } from "../../store/constraint-errors.js";
import type { Db } from "../../store/database.js";
import { createDidRepository } from "../../store/did-repository.js";
import { loadOrgState } from "../../store/load-org-state.js";
import { changeOrgConfig } from "../config/config-change.js";
import { assertValidAt } from "../config/config-validation.js";
import type { DomainDeps } from "../deps.js";
import { BadRequest, Conflict, NotFound } from "../errors.js";
import { ownRow } from "../tenant-rows.js";

export type DidRoutingType = NonNullable<Did["routing_type"]>;

/** SPEC.md §4.5: the sentinel stands in for foreign caller IDs, so no org may own it. */
export const SENTINEL_MESSAGE = `${SENTINEL_DID} is the reserved sentinel number and cannot belong to an org`;

/**
 * The number as stored: separators (spaces, dashes, dots, parentheses) removed, then one of
 * E.164 (`+` and 7-15 digits), local (11 digits starting 0) or international digits (7-15, not
 * starting 0). Anything else is a 400 that says which forms are accepted.
 */
export function normalizeDidNumber(input: string): string {
  const compact = input.trim().replace(/[\s().-]/g, "");
  if (/^\+[1-9][0-9]{6,14}$/.test(compact)) return compact;
  if (/^0[0-9]{10}$/.test(compact)) return compact;
  if (/^[1-9][0-9]{6,14}$/.test(compact)) return compact;
  throw new BadRequest(
    `Invalid DID number '${input}': use E.164 (+919876543210), local 11 digits starting 0 (09876543210) or international digits (919876543210)`,
  );
}

/** Every stored form that names the same line as `number` (E.164, international, local). */
export function numberForms(number: string): string[] {
  const intl = internationalDigits(number);
  const forms = [intl, `+${intl}`];
  if (isIndian(intl)) forms.push(`0${intl.slice(2)}`);
  return forms;
}

/** Throws 409 when the store already holds this number in any form (pool or org). */
export async function assertNumberFree(db: Db, number: string): Promise<void> {
  const existing = await createDidRepository(db).findByNumberForms(numberForms(number));
  if (!existing) return;
  // A number of the pool nobody holds is the platform's to hand out: the org asks for it. (One an
  // org holds answers as before, without saying whose it is.)
  if (existing.org_id === null) {
    throw new Conflict(
      `${existing.number} is a number of the DID pool: request it with POST /did-pool/${existing.id}/request`,
    );
  }
  throw new Conflict(`DID ${existing.number} already exists`);
}

/** True for the reserved sentinel, however it is written. */
export function isSentinel(number: string): boolean {
  return sameNumber(number, SENTINEL_DID);
}

/** The DID row `id` of the caller's org: 404 when absent, 403 when another org's or unassigned. */
export async function findOwnDid(db: Db, orgId: string, id: string): Promise<DidRecord> {
  return ownRow(await createDidRepository(db).findById(id), orgId, "DID not found");
}

/** Turns the stored-as reference of SPEC.md §2 out of what the caller wrote (UUID or number). */
export function canonicalDestination(
  state: OrgState,
  type: DidRoutingType,
  destination: string,
): string {
  return DESTINATION_KINDS[DID_ROUTE_KINDS[type]].stored(state, destination);
}

/**
 * Validates the org as it would be with `did` (new, or replacing the DID with the same id) and
 * throws the first problem of that DID: sentinel, routing target, more than one default.
 */
export function assertDidValid(state: OrgState, did: Did): void {
  const dids = state.dids.filter((d) => d.id !== did.id);
  const cleared = did.is_default ? dids.map((d) => ({ ...d, is_default: false })) : dids;
  const next: OrgState = { ...state, dids: [...cleared, did] };
  assertValidAt(next, `dids[${next.dids.length - 1}]`);
}

/** `GET /dids`: the org's numbers by number. */
export async function listDids(deps: DomainDeps, orgId: string): Promise<DidView[]> {
  return createDidRepository(deps.db).listRecordsByOrg(orgId);
}

/** `GET /dids/{id}`. */
export async function getDid(deps: DomainDeps, orgId: string, id: string): Promise<DidView> {
  return findOwnDid(deps.db, orgId, id);
}

export interface DidInput {
  number: string;
  status?: Did["status"];
  routing_environment?: RoutingEnvironment;
  routing_type?: DidRoutingType | null;
  routing_destination?: string | null;
  is_default?: boolean;
}

/**
 * `POST /dids`: adds a number straight to the org (pool_status `assigned`). It becomes the
 * default when asked to or when the org has no default yet; then a deploy is scheduled.
 */
export async function createDid(
  deps: DomainDeps,
  orgId: string,
  input: DidInput,
): Promise<DidView> {
  const number = normalizeDidNumber(input.number);
  if (isSentinel(number)) throw new BadRequest(SENTINEL_MESSAGE);
  const id = randomUUID();
  try {
    await changeOrgConfig(deps, orgId, async (trx) => {
      await assertNumberFree(trx, number);
      const state = await loadOrgState(trx, orgId);
      const type = input.routing_type ?? null;
      const destination = input.routing_destination?.trim() || null;
      const did = withDefaults(Did, {
        id,
        number,
        status: input.status,
        pool_status: "assigned",
        is_default: input.is_default ?? !state.dids.some((d) => d.is_default),
        routing_type: type,
        routing_destination:
          type !== null && destination !== null
            ? canonicalDestination(state, type, destination)
            : destination,
        routing_environment: input.routing_environment,
        // The org's own number: its trunks deliver it, the shared gateway never does.
        source: "org",
      });
      assertDidValid(state, did);
      const now = deps.clock().toISOString();
      const repo = createDidRepository(trx, deps.clock);
      if (did.is_default) await repo.clearDefaults(orgId, now);
      await repo.insert(orgId, did);
    });
  } catch (error) {
    if (isUniqueViolation(error)) throw new Conflict(`DID ${number} already exists`);
    throw error;
  }
  return getDid(deps, orgId, id);
}

/**
 * `PUT /dids/{id}/routing`: where inbound calls to the number go. An extension or queue is stored
 * by its number, an IVR by its UUID (an IVR extension is accepted and turned into the UUID), an
 * external number verbatim. `routing_type: null` unroutes the number.
 */
export async function routeDid(
  deps: DomainDeps,
  orgId: string,
  id: string,
  input: { routing_type: DidRoutingType | null; routing_destination?: string | null },
): Promise<DidView> {
  await changeOrgConfig(deps, orgId, async (trx) => {
    await findOwnDid(trx, orgId, id);
    const state = await loadOrgState(trx, orgId);
    const current = state.dids.find((d) => d.id === id);
    if (!current) throw new NotFound("DID not found");
    const type = input.routing_type;
    const destination = input.routing_destination?.trim() || null;
    if (type === null && destination !== null) {
      throw new BadRequest("routing_type required with a routing_destination");
    }
    const did: Did = {
      ...current,
      routing_type: type,
      routing_destination:
        type !== null && destination !== null
          ? canonicalDestination(state, type, destination)
          : null,
    };
    assertDidValid(state, did);
    await createDidRepository(trx, deps.clock).update(
      id,
      { routing_type: did.routing_type, routing_destination: did.routing_destination },
      deps.clock().toISOString(),
    );
  });
  return getDid(deps, orgId, id);
}
