// Builds the compiler's input for one org from rows. Arrays come in a fixed order (by extension,
// number or name) so that the same rows always give the same OrgState and the same files.
import {
  type CollectionName,
  emptyCollections,
  mapCollectionsAsync,
} from "../model/collections.js";
import type { OrgInfo, OrgState } from "../model/org-state.js";
import type { Db } from "./database.js";
import { createDidRepository } from "./did-repository.js";
import { createIvrRepository } from "./ivr-repository.js";
import { createOrganizationRepository } from "./organization-repository.js";
import { createOutboundRouteRepository } from "./outbound-route-repository.js";
import { createQueueRepository } from "./queue-repository.js";
import type { OrganizationRow } from "./schema.js";
import { createTimeConditionRepository } from "./time-condition-repository.js";
import { createTrunkRepository } from "./trunk-repository.js";
import { createUserRepository } from "./user-repository.js";

/** The OrgState `org` part of an organization row. */
export function orgInfoFromRow(row: OrganizationRow): OrgInfo {
  const info: OrgInfo = {
    id: row.id,
    name: row.name,
    context_prefix: row.context_prefix,
    status: row.status as OrgInfo["status"],
    settings: {
      recording_enabled: row.recording_enabled === 1,
      max_concurrent_calls: row.max_concurrent_calls,
    },
  };
  if (row.slug) info.slug = row.slug;
  return info;
}

/** Where each collection of the org is read from (a new collection fails to compile here). */
const LOADERS: { [C in CollectionName]: (db: Db, orgId: string) => Promise<OrgState[C]> } = {
  users: (db, orgId) => createUserRepository(db).listByOrg(orgId),
  queues: (db, orgId) => createQueueRepository(db).listByOrg(orgId),
  ivrs: (db, orgId) => createIvrRepository(db).listByOrg(orgId),
  dids: (db, orgId) => createDidRepository(db).listByOrg(orgId),
  trunks: (db, orgId) => createTrunkRepository(db).listByOrg(orgId),
  outbound_routes: (db, orgId) => createOutboundRouteRepository(db).listByOrg(orgId),
  time_conditions: (db, orgId) => createTimeConditionRepository(db).listByOrg(orgId),
};

/** The full OrgState of `orgId`; throws when the org does not exist. */
export async function loadOrgState(db: Db, orgId: string): Promise<OrgState> {
  const org = await createOrganizationRepository(db).findById(orgId);
  if (!org) throw new Error(`organization ${orgId} not found`);
  const collections = await mapCollectionsAsync((name) => LOADERS[name](db, orgId));
  return { org: orgInfoFromRow(org), ...collections };
}

/**
 * What the compiler's PJSIP objects read of an org (src/compiler/pjsip.ts: the org, its users
 * and its trunks), the other collections empty; null when the org does not exist. Realtime
 * PJSIP compiles it on every save, outside the files' debounce, so it costs one round of three
 * queries at once instead of the whole org (test/store/load-org-pjsip-state.test.ts holds the
 * rows it compiles to equal to the whole org's).
 */
export async function loadOrgPjsipState(db: Db, orgId: string): Promise<OrgState | null> {
  const [org, users, trunks] = await Promise.all([
    createOrganizationRepository(db).findById(orgId),
    LOADERS.users(db, orgId),
    LOADERS.trunks(db, orgId),
  ]);
  if (!org) return null;
  return { org: orgInfoFromRow(org), ...emptyCollections(), users, trunks };
}
