// `pbxctl status` for the store-backed flow: per unit, the desired revision (what the store
// compiles to now) beside the applied one (what the engine last loaded), from the store's deploy
// log. Compiles every org once; a CLI-sized cost, not for request paths (`/config/status` does
// one org).
import type { GatewayOptions } from "../model/gateway.js";
import type { Db } from "../store/database.js";
import { createOrganizationRepository } from "../store/organization-repository.js";
import { revisionOf } from "./revision.js";
import { type StatusOptions, type UnitStatus, unitStatuses } from "./status.js";
import { StoreBuilds } from "./store-builds.js";
import { StoreDeployLog } from "./store-deploy-log.js";
import { orgUnit, unitId } from "./units.js";

/**
 * Every unit's status (of engine node `nodeId`'s engine, when given); a unit whose desired revision is not applied is `pending`; with
 * `options.engineDir`, a unit whose files changed there since they were applied is drifted.
 * `soundsDir` as the server's, so that music-on-hold files count as they do for its deploys.
 */
export async function storeUnitStatuses(
  db: Db,
  gateway: GatewayOptions,
  options: StatusOptions = {},
  soundsDir?: string,
  pjsip: "file" | "realtime" = "file",
  nodeId?: string,
  behindEdge = false,
): Promise<UnitStatus[]> {
  // The files as the server writes them in its PJSIP mode (realtime: pjsip.conf keeps identify),
  // with its edge (support_path); those of one engine node's orgs only, with `nodeId` (issue 25).
  const builds = new StoreBuilds({
    db,
    gateway,
    pjsip,
    behindEdge,
    ...(soundsDir !== undefined ? { soundsDir } : {}),
    ...(nodeId !== undefined ? { nodeId } : {}),
  });
  const desired = new Map<string, string>();
  for (const org of await builds.orgs()) {
    try {
      desired.set(
        unitId(orgUnit(org.context_prefix)),
        revisionOf((await builds.orgFiles(org.id)).files),
      );
    } catch {
      // Does not compile: no desired revision; the failed deploy record says why.
    }
  }
  desired.set("gateway", revisionOf((await builds.gateway()).files));
  desired.set("top", revisionOf(await builds.topLevelFiles()));
  const orgNames = new Map(
    (await createOrganizationRepository(db).list()).map((org) => [
      org.context_prefix,
      org.slug ?? org.name,
    ]),
  );
  const statuses = await unitStatuses(new StoreDeployLog(db, nodeId), desired, {
    ...options,
    orgNames,
  });
  // An org that never had files and has none now (not active) is not pending.
  const empty = revisionOf([]);
  return statuses.map((s) =>
    s.desiredRevision === empty && s.appliedRevision === null ? { ...s, pending: false } : s,
  );
}
