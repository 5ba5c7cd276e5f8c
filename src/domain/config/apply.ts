// `pbxctl apply`: reconciles the store to org files. Per org, in one transaction: the org row,
// then each resource kind matched by id (or, failing that, by its natural key: extension, queue
// number, DID number, trunk or route name) and created, updated, or with `prune` deleted (DIDs
// are released to the pool, not deleted). The org as it will be is checked with the same
// validateOrg rules as API saves before anything is written, and extensions are claimed in the
// store's claim table as the API does. All or nothing per org; a dry run computes the same plan
// and writes nothing.

import { systemClock } from "../../clock.js";
import { type OrgImpact, orgImpact } from "../../compiler/impact.js";
import {
  COLLECTION_KINDS,
  type CollectionItem,
  type CollectionKind,
  type CollectionKindName,
  type CollectionName,
  collectionKind,
  emptyCollections,
  type ItemOf,
} from "../../model/collections.js";
import { claimedElsewhere, trunkClaims } from "../../model/match-claims.js";
import type { OrgExtras } from "../../model/org-extras.js";
import type { Did, OrgState, OutboundRoute, Trunk, User } from "../../model/org-state.js";
import { claimedAddressMessage } from "../../model/trunk-identify.js";
import { validateOrg } from "../../model/validate.js";
import type { Db } from "../../store/database.js";
import { createDidRepository, RELEASED_TO_POOL } from "../../store/did-repository.js";
import { createIvrRepository } from "../../store/ivr-repository.js";
import { loadOrgState } from "../../store/load-org-state.js";
import { createOrganizationRepository } from "../../store/organization-repository.js";
import { createOutboundRouteRepository } from "../../store/outbound-route-repository.js";
import { createQueueRepository } from "../../store/queue-repository.js";
import { createTimeConditionRepository } from "../../store/time-condition-repository.js";
import { createTrunkRepository } from "../../store/trunk-repository.js";
import { createUserRepository } from "../../store/user-repository.js";
import type { UrlPolicy } from "../../webhooks/url-guard.js";
import { BadRequest, Conflict } from "../errors.js";
import { assertPrefixApart, createOrganizationRecord } from "../orgs/org-creation.js";
import { assertSlugFree, freeSlug, slugFromName } from "../orgs/org-slugs.js";
import { numberForms } from "../routing/dids.js";
import { reclaimAllExtensions } from "../routing/extension-space.js";
import { type ApplyAuditRun, orgSnapshot, recordApplied } from "./apply-audit.js";
import { planOrgExtras, writeOrgExtras } from "./apply-extras.js";
import { trunkPasswordEnv } from "./export.js";
import { canonical, type Matched, match } from "./matching.js";

/** What a change is to: the org row, an item of one of its collections, or an extra. */
export type ResourceKind = "org" | CollectionKindName | "webhook" | "org_user";

/** One change apply makes (or, in a dry run, would make). */
export interface Change {
  kind: ResourceKind;
  /** `release`: a DID handed back to the pool; `assign`: a pool DID taken by the org. */
  action: "create" | "update" | "delete" | "release" | "assign";
  /** What a person recognises: the extension, number or name. */
  key: string;
}

export interface OrgApplyResult {
  orgId: string;
  name: string;
  created: boolean;
  changes: Change[];
  /** Resources in the store that the file does not have and that were kept (no `--prune`). */
  kept: Change[];
  /** Whether the org's DIDs changed (the gateway must be regenerated). */
  didsChanged: boolean;
  /** What the change means for callers, in plain lines (plan's impact lines). */
  impact: OrgImpact;
}

export interface ApplyOptions {
  prune?: boolean;
  dryRun?: boolean;
  /** Seals the org key of an org created by apply (the server key of the data dir). */
  serverKey: Buffer;
  now?: () => Date;
  /** Which webhook targets are allowed (PBX_WEBHOOK_ALLOW_PRIVATE); default: public only. */
  webhookUrlPolicy?: UrlPolicy;
  /** Appends the audit record of a changed org in its transaction (not in a dry run). */
  audit?: ApplyAuditRun;
}

/** The org file cannot be applied as it is (the org after the change would be invalid). */
export class ApplyRefused extends BadRequest {}

/** What the store keeps of a user's SIP secret: the digest (password_env is resolved into it). */
function storedUser(user: User): User {
  if (!user.sip?.md5_cred) return user;
  return { ...user, sip: { md5_cred: user.sip.md5_cred } };
}

/**
 * A trunk as compared with the store. Export names a password the store holds itself by a derived
 * variable (`trunkPasswordEnv`); a file naming exactly that variable says "the stored password",
 * so export -> apply is not an update of every such trunk.
 */
function sameAsStoredPassword(state: OrgState, trunk: Trunk): Trunk {
  if (trunk.password_env !== trunkPasswordEnv(state, trunk)) return trunk;
  const { password_env: _derived, ...rest } = trunk;
  return rest;
}

type MatchedCollections = { [C in CollectionName]: Matched<ItemOf<C>> };

interface Plan {
  state: OrgState;
  /** Each collection's file items paired with the stored ones. */
  matched: MatchedCollections;
  /** Desired DIDs that sit unassigned in the pool: taken by the org. */
  poolDids: Map<string, string>;
  /** Routes in their final order (positions rewritten when it changed). */
  routeOrder: OutboundRoute[];
  reorderRoutes: boolean;
}

/** The org's items after the apply: the file's, then (without prune) the stored extras. */
function finalList<T>(m: Matched<T>, prune: boolean): T[] {
  return [...m.inFileOrder, ...(prune ? [] : m.extra)];
}

/** Applies one org file's state to the store (or plans it, in a dry run). */
export async function applyOrgState(
  db: Db,
  desiredInput: OrgState,
  options: ApplyOptions,
): Promise<OrgApplyResult> {
  const prune = options.prune ?? false;
  const now = (options.now ?? systemClock)().toISOString();
  let desired: OrgState = { ...desiredInput, users: desiredInput.users.map(storedUser) };
  const orgId = desired.org.id;

  return db.transaction().execute(async (trx) => {
    const audit = options.dryRun ? undefined : options.audit;
    const before = audit ? await orgSnapshot(trx, orgId) : null;
    const orgs = createOrganizationRepository(trx);
    const existingRow = await orgs.findById(orgId);
    const stored: OrgState = existingRow
      ? await loadOrgState(trx, orgId)
      : { org: desired.org, ...emptyCollections() };
    // A file without a slug keeps the org's (like any field it lacks); a new org gets one
    // made from its name. A slug another org holds refuses the file.
    if (desired.org.slug === undefined) {
      const slug = existingRow?.slug ?? (await freeSlug(trx, slugFromName(desired.org.name)));
      desired = { ...desired, org: { ...desired.org, slug } };
    } else if (desired.org.slug !== existingRow?.slug) {
      await assertSlugFree(trx, desired.org.slug, orgId);
    }
    if (desired.org.context_prefix !== existingRow?.context_prefix) {
      await assertPrefixApart(trx, desired.org.context_prefix, orgId);
    }
    const plan = await makePlan(trx, stored, desired, prune);
    const problems = validateOrg(plan.state).filter((d) => d.severity === "error");
    if (problems.length > 0) {
      const first = problems[0]!;
      throw new ApplyRefused(
        `${desired.org.name}: ${first.path}: ${first.message}` +
          (problems.length > 1 ? ` (and ${problems.length - 1} more)` : ""),
      );
    }
    // A carrier address another org's trunk matches is that org's traffic (as the API refuses).
    const elsewhere = trunkClaims(await createTrunkRepository(trx).listOutsideOrg(orgId));
    for (const [index, trunk] of plan.state.trunks.entries()) {
      const claimed = claimedElsewhere(trunk, elsewhere);
      if (claimed !== undefined) {
        throw new Conflict(
          `${desired.org.name}: trunks[${index}]: ${claimedAddressMessage(claimed)}`,
        );
      }
    }
    const result = {
      ...describe(plan, stored, !existingRow, prune),
      impact: orgImpact(existingRow ? stored : undefined, plan.state),
    };
    const extras = await planOrgExtras(trx, orgId, desiredInput as OrgState & OrgExtras, {
      prune,
      urlPolicy: options.webhookUrlPolicy ?? { allowPrivate: false },
    });
    result.changes.push(...extras.changes);
    result.kept.push(...extras.kept);
    if (options.dryRun) return result;

    if (!existingRow) {
      // Nobody learns the org's secret: an admin regenerates it to hand out credentials.
      await createOrganizationRecord(
        trx,
        {
          id: orgId,
          name: desired.org.name,
          slug: desired.org.slug ?? null,
          status: desired.org.status,
          contextPrefix: desired.org.context_prefix,
          settings: desired.org.settings,
        },
        { serverKey: options.serverKey, now },
      );
    } else if (result.changes.some((c) => c.kind === "org")) {
      await orgs.update(orgId, {
        name: desired.org.name,
        slug: desired.org.slug ?? null,
        status: desired.org.status,
        context_prefix: desired.org.context_prefix,
        recording_enabled: desired.org.settings.recording_enabled ? 1 : 0,
        max_concurrent_calls: desired.org.settings.max_concurrent_calls,
        updated_at: now,
      });
    }
    await write(trx, orgId, plan, prune, now);
    await writeOrgExtras(trx, orgId, extras, prune, now);
    if (audit) await recordApplied(trx, audit, result, before);
    return result;
  });
}

async function makePlan(
  db: Db,
  stored: OrgState,
  desired: OrgState,
  prune: boolean,
): Promise<Plan> {
  const byNaturalKey = <C extends CollectionName>(
    name: C,
    comparable?: (item: ItemOf<C>) => unknown,
  ): Matched<ItemOf<C>> =>
    match<ItemOf<C>>(stored[name], desired[name], collectionKind(name).naturalKey, comparable);
  const matched: MatchedCollections = {
    users: byNaturalKey("users"),
    queues: byNaturalKey("queues"),
    ivrs: byNaturalKey("ivrs"),
    dids: byNaturalKey("dids"),
    trunks: byNaturalKey("trunks", (t) => sameAsStoredPassword(desired, t)),
    outbound_routes: byNaturalKey("outbound_routes"),
    time_conditions: byNaturalKey("time_conditions"),
  };
  const { dids, outbound_routes: routes } = matched;

  // A DID new to the org must be free: unknown to the store, or unassigned in the pool.
  const poolDids = new Map<string, string>();
  const repo = createDidRepository(db);
  for (const did of dids.creates) {
    const row = await repo.findByNumberForms(numberForms(did.number));
    if (!row) continue;
    if (row.org_id !== null && row.org_id !== desired.org.id) {
      throw new Conflict(`DID ${did.number} belongs to another organization`);
    }
    poolDids.set(did.id!, row.id);
  }

  const routeOrder = finalList(routes, prune);
  const storedOrder = stored.outbound_routes.map((r) => r.id).join(",");
  const state: OrgState = {
    org: desired.org,
    users: finalList(matched.users, prune),
    queues: finalList(matched.queues, prune),
    ivrs: finalList(matched.ivrs, prune),
    dids: finalList(dids, prune),
    trunks: finalList(matched.trunks, prune),
    outbound_routes: routeOrder,
    time_conditions: finalList(matched.time_conditions, prune),
  };
  return {
    state,
    matched,
    poolDids,
    routeOrder,
    reorderRoutes: routeOrder.map((r) => r.id).join(",") !== storedOrder,
  };
}

/** The order changes are listed in: what others depend on first (a route needs its trunk). */
const CHANGE_ORDER = [
  "trunks",
  "outbound_routes",
  "users",
  "queues",
  "ivrs",
  "time_conditions",
  "dids",
] as const satisfies readonly CollectionName[];

function describe(
  plan: Plan,
  stored: OrgState,
  created: boolean,
  prune: boolean,
): Omit<OrgApplyResult, "impact"> {
  const changes: Change[] = [];
  const kept: Change[] = [];
  if (created) changes.push({ kind: "org", action: "create", key: plan.state.org.name });
  else if (canonical(stored.org) !== canonical(plan.state.org)) {
    changes.push({ kind: "org", action: "update", key: plan.state.org.name });
  }
  for (const name of CHANGE_ORDER) {
    const m: Matched<CollectionItem> = plan.matched[name];
    const { changeKey }: CollectionKind<CollectionItem> = COLLECTION_KINDS[name];
    const { kind } = COLLECTION_KINDS[name];
    for (const x of m.creates) {
      const assigned = plan.poolDids.has(x.id ?? "");
      changes.push({ kind, action: assigned ? "assign" : "create", key: changeKey(x) });
    }
    for (const x of m.updates) changes.push({ kind, action: "update", key: changeKey(x) });
    for (const x of m.extra) {
      const action = kind === "did" ? "release" : "delete";
      (prune ? changes : kept).push({ kind, action, key: changeKey(x) });
    }
  }
  const routeChanged = changes.some((c) => c.kind === "outbound_route");
  if (plan.reorderRoutes && !routeChanged && !created) {
    changes.push({ kind: "outbound_route", action: "update", key: "(order)" });
  }
  const didsChanged = changes.some((c) => c.kind === "did");
  return {
    orgId: plan.state.org.id,
    name: plan.state.org.name,
    created,
    changes,
    kept,
    didsChanged,
  };
}

async function write(db: Db, orgId: string, plan: Plan, prune: boolean, now: string) {
  const users = createUserRepository(db);
  const queues = createQueueRepository(db);
  const ivrs = createIvrRepository(db);
  const trunks = createTrunkRepository(db);
  const routes = createOutboundRouteRepository(db);
  const dids = createDidRepository(db);
  const timeConditions = createTimeConditionRepository(db);

  for (const trunk of plan.matched.trunks.creates) await trunks.insert(orgId, trunk);
  for (const trunk of plan.matched.trunks.updates) await trunks.replace(trunk.id!, trunk);
  if (prune) for (const route of plan.matched.outbound_routes.extra) await routes.delete(route.id!);
  for (const route of plan.matched.outbound_routes.creates) await routes.insert(orgId, route);
  for (const route of plan.matched.outbound_routes.updates)
    await routes.replace(orgId, route.id!, route);
  if (plan.reorderRoutes) await routes.reorder(plan.routeOrder.map((route) => route.id!));
  if (prune) for (const trunk of plan.matched.trunks.extra) await trunks.delete(trunk.id!);

  if (prune) for (const user of plan.matched.users.extra) await users.delete(orgId, user.id!);
  for (const user of plan.matched.users.creates) await users.insert(orgId, user);
  for (const user of plan.matched.users.updates) await users.update(orgId, user.id!, user);

  if (prune) for (const queue of plan.matched.queues.extra) await queues.delete(orgId, queue.id!);
  for (const queue of plan.matched.queues.creates) await queues.insert(orgId, queue);
  for (const queue of plan.matched.queues.updates) {
    // Members are part of the queue as a file states it: replaced as a whole.
    await queues.update(orgId, queue.id!, queue);
    await queues.replaceMembers(queue.id!, queue.members);
  }

  if (prune) for (const ivr of plan.matched.ivrs.extra) await ivrs.delete(orgId, ivr.id!);
  for (const ivr of plan.matched.ivrs.creates) await ivrs.insert(orgId, ivr);
  for (const ivr of plan.matched.ivrs.updates) {
    // Options are part of the IVR as a file states it: replaced as a whole.
    await ivrs.update(orgId, ivr.id!, ivr, now);
    await ivrs.replaceOptions(ivr.id!, ivr.options, now);
  }

  // A time condition is referred to by name, not by key: the order among them is free.
  if (prune)
    for (const tc of plan.matched.time_conditions.extra) await timeConditions.delete(tc.id!);
  for (const tc of plan.matched.time_conditions.creates) await timeConditions.insert(orgId, tc);
  for (const tc of plan.matched.time_conditions.updates) await timeConditions.replace(tc.id!, tc);

  // At most one default per org (a unique index): clear them, write, then set the final one.
  const didsTouched =
    plan.matched.dids.creates.length + plan.matched.dids.updates.length > 0 || prune;
  if (didsTouched) await dids.clearDefaults(orgId, now);
  if (prune) {
    for (const did of plan.matched.dids.extra) {
      await dids.update(did.id!, RELEASED_TO_POOL, now);
    }
  }
  for (const did of plan.matched.dids.creates) {
    const poolId = plan.poolDids.get(did.id!);
    if (poolId) await dids.update(poolId, didColumns(orgId, did), now);
    else await dids.insert(orgId, { ...did, is_default: false });
  }
  for (const did of plan.matched.dids.updates)
    await dids.update(did.id!, didColumns(orgId, did), now);
  if (didsTouched) {
    const chosen = plan.state.dids.find((did) => did.is_default);
    const id = chosen && (plan.poolDids.get(chosen.id!) ?? chosen.id!);
    if (id) await dids.update(id, { is_default: 1 }, now);
  }

  // Claims are rebuilt from the final state, after every extension moved.
  await reclaimAllExtensions(db, orgId, plan.state);
}

function didColumns(orgId: string, did: Did) {
  return {
    org_id: orgId,
    number: did.number,
    status: did.status,
    pool_status: did.pool_status,
    is_default: 0, // set after every DID is written (see above)
    routing_type: did.routing_type,
    routing_destination: did.routing_destination,
    routing_environment: did.routing_environment,
    source: did.source ?? "pool",
  };
}
