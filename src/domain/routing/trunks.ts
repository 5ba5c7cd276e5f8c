// SIP trunks of an org (`/trunks`). The trunk password is the one secret the service keeps
// readable: PJSIP must present it to the carrier (outbound auth and registration), so it cannot be
// stored as a one-way digest the way user SIP passwords are. It is write-only over the API: no
// answer ever contains it, only `has_password`.
import { randomUUID } from "node:crypto";
import { withDefaults } from "../../model/defaults.js";
import { claimedElsewhere, trunkClaims } from "../../model/match-claims.js";
import { type OrgState, Trunk } from "../../model/org-state.js";
import { claimedAddressMessage } from "../../model/trunk-identify.js";
import { isUniqueViolation } from "../../store/constraint-errors.js";
import type { Db } from "../../store/database.js";
import { loadOrgState } from "../../store/load-org-state.js";
import { createOutboundRouteRepository } from "../../store/outbound-route-repository.js";
import { createTrunkRepository } from "../../store/trunk-repository.js";
import { changeOrgConfig } from "../config/config-change.js";
import { assertValidAt } from "../config/config-validation.js";
import type { DomainDeps } from "../deps.js";
import { BadRequest, Conflict } from "../errors.js";
import { ownRow } from "../tenant-rows.js";

export interface TrunkView {
  id: string;
  name: string;
  host: string;
  port: number;
  transport: Trunk["transport"];
  username: string | null;
  /** Whether a password is stored; the password itself is never answered. */
  has_password: boolean;
  registration: boolean;
  codecs: Trunk["codecs"];
  match: string[];
}

/** A trunk as the API shows it: everything but the password. */
export function trunkView(trunk: Trunk & { id: string }): TrunkView {
  return {
    id: trunk.id,
    name: trunk.name,
    host: trunk.host,
    port: trunk.port,
    transport: trunk.transport,
    username: trunk.username,
    has_password: trunk.password !== undefined || trunk.password_env !== undefined,
    registration: trunk.registration,
    codecs: trunk.codecs,
    match: trunk.match,
  };
}

export interface TrunkInput {
  name?: string;
  host?: string;
  port?: number;
  transport?: Trunk["transport"];
  username?: string | null;
  /** Null removes the stored password. */
  password?: string | null;
  registration?: boolean;
  codecs?: Trunk["codecs"];
  match?: string[];
}

/** Trunk `id` of the caller's org: 404 when absent, 403 when another org's. */
async function findOwnTrunk(db: Db, orgId: string, id: string): Promise<Trunk & { id: string }> {
  return ownRow(await createTrunkRepository(db).findById(id), orgId, "Trunk not found").trunk;
}

function merge(base: Trunk, input: TrunkInput): Trunk {
  const trunk: Trunk = { ...base };
  if (input.name !== undefined) trunk.name = input.name;
  if (input.host !== undefined) trunk.host = input.host;
  if (input.port !== undefined) trunk.port = input.port;
  if (input.transport !== undefined) trunk.transport = input.transport;
  if (input.username !== undefined) trunk.username = input.username;
  if (input.registration !== undefined) trunk.registration = input.registration;
  if (input.codecs !== undefined) trunk.codecs = [...new Set(input.codecs)];
  if (input.match !== undefined) trunk.match = input.match;
  if (input.password === null) {
    delete trunk.password;
    delete trunk.password_env;
  } else if (input.password !== undefined) {
    trunk.password = input.password;
    delete trunk.password_env;
  }
  return trunk;
}

// Rules beyond the schema: a unique name per org, and what PJSIP needs to register.
function assertTrunkValid(state: OrgState, trunk: Trunk & { id: string }): void {
  const clash = state.trunks.find((t) => t.name === trunk.name && t.id !== trunk.id);
  if (clash) throw new Conflict(`Trunk '${trunk.name}' already exists`);
  if (trunk.registration && trunk.username === null) {
    throw new BadRequest("registration needs a username");
  }
  const trunks = state.trunks.filter((t) => t.id !== trunk.id);
  const next: OrgState = { ...state, trunks: [...trunks, trunk] };
  assertValidAt(next, `trunks[${next.trunks.length - 1}]`);
}

/**
 * 409 when the trunk's identify would match an address or range another org's trunk matches:
 * Asterisk would give that traffic to one of them, so naming it could take another tenant's
 * carrier calls. The message never names the other org.
 */
export async function assertAddressesUnclaimed(db: Db, orgId: string, trunk: Trunk): Promise<void> {
  const others = await createTrunkRepository(db).listOutsideOrg(orgId);
  const claimed = claimedElsewhere(trunk, trunkClaims(others));
  if (claimed !== undefined) throw new Conflict(claimedAddressMessage(claimed));
}

async function saveTrunk(
  deps: DomainDeps,
  orgId: string,
  write: (db: Db) => Promise<Trunk & { id: string }>,
): Promise<TrunkView> {
  try {
    return trunkView(await changeOrgConfig(deps, orgId, write));
  } catch (error) {
    if (isUniqueViolation(error)) throw new Conflict("Trunk name already exists");
    throw error;
  }
}

/** `GET /trunks`: the org's trunks by name. */
export async function listTrunks(deps: DomainDeps, orgId: string): Promise<TrunkView[]> {
  const trunks = await createTrunkRepository(deps.db).listByOrg(orgId);
  return trunks.map((t) => trunkView({ ...t, id: t.id ?? "" }));
}

/** `GET /trunks/{id}`. */
export async function getTrunk(deps: DomainDeps, orgId: string, id: string): Promise<TrunkView> {
  return trunkView(await findOwnTrunk(deps.db, orgId, id));
}

/** `POST /trunks`: a new trunk with the model's defaults; schedules a deploy. */
export async function createTrunk(
  deps: DomainDeps,
  orgId: string,
  input: TrunkInput & { name: string; host: string },
): Promise<TrunkView> {
  return saveTrunk(deps, orgId, async (trx) => {
    const state = await loadOrgState(trx, orgId);
    const base = withDefaults(Trunk, { name: input.name, host: input.host });
    const trunk = { ...merge(base, input), id: randomUUID() };
    assertTrunkValid(state, trunk);
    await assertAddressesUnclaimed(trx, orgId, trunk);
    return createTrunkRepository(trx, deps.clock).insert(orgId, trunk);
  });
}

/** `PUT /trunks/{id}`: partial; an omitted password keeps the stored one. Schedules a deploy. */
export async function updateTrunk(
  deps: DomainDeps,
  orgId: string,
  id: string,
  input: TrunkInput,
): Promise<TrunkView> {
  return saveTrunk(deps, orgId, async (trx) => {
    const current = await findOwnTrunk(trx, orgId, id);
    const state = await loadOrgState(trx, orgId);
    const trunk = { ...merge(current, input), id };
    assertTrunkValid(state, trunk);
    await assertAddressesUnclaimed(trx, orgId, trunk);
    await createTrunkRepository(trx, deps.clock).replace(id, trunk);
    return trunk;
  });
}

/** `DELETE /trunks/{id}`: 409 naming the outbound route that still sends calls through it. */
export async function deleteTrunk(deps: DomainDeps, orgId: string, id: string): Promise<void> {
  await changeOrgConfig(deps, orgId, async (trx) => {
    const trunk = await findOwnTrunk(trx, orgId, id);
    const [route] = await createOutboundRouteRepository(trx, deps.clock).namesUsingTrunk(id);
    if (route !== undefined) {
      throw new Conflict(`Trunk '${trunk.name}' is used by outbound route '${route}'`);
    }
    await createTrunkRepository(trx, deps.clock).delete(id);
  });
}
