// Organizations: creation by an admin, the request/approval flow of signed-up people (SPEC.md §3),
// own-org settings, suspension, and the org credential operations of §4.1.

import { randomUUID } from "node:crypto";
import type {
  AdminOrganizationView,
  OrganizationRequestView,
  OrganizationView,
} from "../../model/org-views.js";
import type { OrganizationRecord } from "../../model/stored-records.js";
import { createOrgUserRepository } from "../../store/org-user-repository.js";
import { createOrganizationRepository } from "../../store/organization-repository.js";
import type { OrgPrincipal, PendingUserPrincipal } from "../access/principal.js";
import { notifyConfigChanged } from "../config/config-change.js";
import type { DomainDeps } from "../deps.js";
import { BadRequest, Conflict, Forbidden, NotFound } from "../errors.js";
import { placementsByOrg, placementView } from "../nodes/placement.js";
import { decrypt, hashSecret, newToken } from "../secrets.js";
import { type CreatedOrganization, createOrganizationRecord } from "./org-creation.js";
import { type ProvisionedResources, provisionStarterResources } from "./org-provisioning.js";
import { assertSlugFree, freeSlug, slugFromName } from "./org-slugs.js";

export const ORG_TYPES = ["test", "production"] as const;
export const AWAITING_APPROVAL = "awaiting approval";

export interface SettingsPatch {
  recording_enabled?: boolean;
  max_concurrent_calls?: number;
}

/** The fields of an org its owner may change (`slug` must stay unique across orgs). */
export interface OrganizationPatch {
  name?: string;
  type?: string;
  slug?: string;
  settings?: SettingsPatch;
}

export interface OrganizationInput {
  name: string;
  type?: string;
  slug?: string;
  settings?: SettingsPatch;
}

/** The public shape of an org row (never any credential). */
export function organizationView(row: OrganizationRecord): OrganizationView {
  return {
    id: row.id,
    name: row.name,
    slug: row.slug,
    type: row.type,
    status: row.status as OrganizationView["status"],
    context_prefix: row.context_prefix,
    settings: {
      recording_enabled: row.recording_enabled === 1,
      max_concurrent_calls: row.max_concurrent_calls,
    },
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

function requestView(row: OrganizationRecord): OrganizationRequestView {
  return {
    id: row.id,
    name: row.name,
    type: row.type,
    status: row.status as OrganizationRequestView["status"],
    request_status: (row.request_status ?? "approved") as OrganizationRequestView["request_status"],
    message: row.status === "active" ? "approved" : AWAITING_APPROVAL,
    created_at: row.created_at,
    decided_at: row.decided_at,
  };
}

export { contextPrefixOf } from "./org-creation.js";

async function insertOrganization(
  deps: DomainDeps,
  input: OrganizationInput,
  request?: { status: string; requestedBy: string },
): Promise<CreatedOrganization> {
  if (input.slug !== undefined) await assertSlugFree(deps.db, input.slug, null);
  const slug = input.slug ?? (await freeSlug(deps.db, slugFromName(input.name)));
  return createOrganizationRecord(
    deps.db,
    {
      name: input.name,
      slug,
      type: input.type,
      status: request ? "pending" : "active",
      settings: input.settings,
      request,
    },
    { serverKey: deps.config.serverKey, now: deps.clock().toISOString() },
  );
}

/** `POST /organizations` (admin): an active org; its key and secret are in this answer only. */
export async function createOrganization(
  deps: DomainDeps,
  input: OrganizationInput,
): Promise<AdminOrganizationView & { api_key: string; api_secret: string }> {
  const { row, apiKey, apiSecret, placement } = await insertOrganization(deps, input);
  await notifyConfigChanged(deps, row.id);
  return {
    ...organizationView(row),
    placement: placement ? await placementView(deps.db, placement) : null,
    api_key: apiKey,
    api_secret: apiSecret,
  };
}

/** All orgs, oldest first (admin). */
export async function listOrganizations(deps: DomainDeps): Promise<AdminOrganizationView[]> {
  const placements = await placementsByOrg(deps.db);
  return (await createOrganizationRepository(deps.db).list()).map((row) => ({
    ...organizationView(row),
    placement: placements.get(row.id) ?? null,
  }));
}

async function findOrg(deps: DomainDeps, id: string): Promise<OrganizationRecord> {
  const org = await createOrganizationRepository(deps.db).findById(id);
  if (!org) throw new NotFound("Organization not found");
  return org;
}

/** Throws 403 unless the caller's org is `orgId` (cross-org use, SPEC.md §5 rule 8). */
export function assertOwnOrg(principal: OrgPrincipal, orgId: string): void {
  if (principal.orgId !== orgId) throw new Forbidden("Access denied to this organization");
}

/** `GET /organizations/{id}` for the caller's own org. */
export async function getOwnOrganization(
  deps: DomainDeps,
  principal: OrgPrincipal,
  id: string,
): Promise<OrganizationView> {
  assertOwnOrg(principal, id);
  return organizationView(await findOrg(deps, id));
}

async function applyUpdate(
  deps: DomainDeps,
  org: OrganizationRecord,
  patch: OrganizationPatch & { status?: string },
): Promise<OrganizationView> {
  const update: Partial<OrganizationRecord> = { updated_at: deps.clock().toISOString() };
  if (patch.name !== undefined) update.name = patch.name;
  if (patch.slug !== undefined && patch.slug !== org.slug) {
    await assertSlugFree(deps.db, patch.slug, org.id);
    update.slug = patch.slug;
  }
  if (patch.type !== undefined) update.type = patch.type;
  if (patch.status !== undefined) update.status = patch.status;
  if (patch.settings?.recording_enabled !== undefined) {
    update.recording_enabled = patch.settings.recording_enabled ? 1 : 0;
  }
  if (patch.settings?.max_concurrent_calls !== undefined) {
    update.max_concurrent_calls = patch.settings.max_concurrent_calls;
  }
  const repo = createOrganizationRepository(deps.db);
  await repo.update(org.id, update);
  const updated = await findOrg(deps, org.id);
  // Recording and the call limit live in the dialplan; status decides whether the org is served.
  if (patch.settings !== undefined || patch.status !== undefined) {
    await notifyConfigChanged(deps, org.id);
  }
  return organizationView(updated);
}

/** `PUT /organizations/{id}`: name, type and settings of the caller's own org. */
export async function updateOwnOrganization(
  deps: DomainDeps,
  principal: OrgPrincipal,
  id: string,
  patch: OrganizationPatch,
): Promise<OrganizationView> {
  assertOwnOrg(principal, id);
  return applyUpdate(deps, await findOrg(deps, id), patch);
}

/** `PUT /admin/organizations/{id}`: any field including `status` (suspension, reactivation). */
export async function adminUpdateOrganization(
  deps: DomainDeps,
  id: string,
  patch: OrganizationPatch & { status?: string },
): Promise<OrganizationView> {
  const org = await findOrg(deps, id);
  if (patch.status === "active" && org.request_status === "pending") {
    throw new Conflict("Organization request is pending: approve it instead");
  }
  return applyUpdate(deps, org, patch);
}

/** A new org secret (old one stops working); the org key is unchanged and returned with it. */
async function regenerateSecret(
  deps: DomainDeps,
  org: OrganizationRecord,
): Promise<{ api_key: string; api_secret: string }> {
  const apiSecret = newToken("");
  await createOrganizationRepository(deps.db).update(org.id, {
    api_secret_hash: hashSecret(apiSecret),
    updated_at: deps.clock().toISOString(),
  });
  return { api_key: decrypt(org.api_key_encrypted, deps.config.serverKey), api_secret: apiSecret };
}

/** `POST /organizations/{id}/regenerate-secret`: own org only. */
export async function regenerateOwnSecret(
  deps: DomainDeps,
  principal: OrgPrincipal,
  id: string,
): Promise<{ api_key: string; api_secret: string }> {
  assertOwnOrg(principal, id);
  return regenerateSecret(deps, await findOrg(deps, id));
}

/** `POST /admin/organizations/{id}/regenerate-secret`: for locked-out orgs. */
export async function adminRegenerateSecret(
  deps: DomainDeps,
  id: string,
): Promise<{ api_key: string; api_secret: string }> {
  return regenerateSecret(deps, await findOrg(deps, id));
}

/** `GET /admin/organizations/{id}/credentials`: the org key only; never changes state. */
export async function readCredentials(
  deps: DomainDeps,
  id: string,
): Promise<{ org_id: string; api_key: string; api_secret: null }> {
  const org = await findOrg(deps, id);
  return {
    org_id: org.id,
    api_key: decrypt(org.api_key_encrypted, deps.config.serverKey),
    api_secret: null,
  };
}

/** `POST /organizations/{id}/regenerate`: asks for the org's configuration to be redeployed. */
export async function requestRedeploy(
  deps: DomainDeps,
  principal: OrgPrincipal,
  id: string,
): Promise<{ success: true; scheduled: true }> {
  assertOwnOrg(principal, id);
  await findOrg(deps, id);
  await notifyConfigChanged(deps, id);
  return { success: true, scheduled: true };
}

function requesterEmail(person: PendingUserPrincipal): string {
  if (!person.email)
    throw new BadRequest("An email address is required to request an organization");
  return person.email;
}

/**
 * `POST /organizations/requests`: a signed-in person with no org asks for one. The org is
 * `pending` and the person becomes its owner once an admin approves it.
 */
export async function requestOrganization(
  deps: DomainDeps,
  person: PendingUserPrincipal,
  input: { name: string; type?: string },
): Promise<OrganizationRequestView> {
  const email = requesterEmail(person);
  const open = await createOrganizationRepository(deps.db).listRequestedBy(email);
  if (open.some((o) => o.request_status === "pending")) {
    throw new Conflict("You already have an organization request awaiting approval");
  }
  const { row } = await deps.db.transaction().execute(async (trx) => {
    const created = await insertOrganization({ ...deps, db: trx }, input, {
      status: "pending",
      requestedBy: email,
    });
    const now = deps.clock().toISOString();
    await createOrgUserRepository(trx).insert({
      id: randomUUID(),
      org_id: created.row.id,
      email,
      subject: person.subject,
      name: null,
      role: "owner",
      status: "active",
      created_at: now,
      updated_at: now,
    });
    return created;
  });
  return requestView(row);
}

/** `GET /organizations/requests`: the caller's own requests and their state. */
export async function listOwnRequests(
  deps: DomainDeps,
  person: PendingUserPrincipal,
): Promise<OrganizationRequestView[]> {
  if (!person.email) return [];
  return (await createOrganizationRepository(deps.db).listRequestedBy(person.email)).map(
    requestView,
  );
}

/** `GET /admin/organizations/pending`: requests awaiting a decision, oldest first. */
export async function listPendingRequests(deps: DomainDeps): Promise<OrganizationRequestView[]> {
  const rows = await createOrganizationRepository(deps.db).list({ requestStatus: "pending" });
  return rows.map((row) => ({ ...requestView(row), requested_by: row.requested_by_email }));
}

async function findPendingRequest(deps: DomainDeps, id: string): Promise<OrganizationRecord> {
  const org = await findOrg(deps, id);
  if (org.request_status !== "pending") {
    throw new Conflict(
      `Organization request is not pending (it is ${org.request_status ?? "not a request"})`,
    );
  }
  return org;
}

/**
 * `POST /admin/organizations/{id}/approve`: the org becomes active with a trunk, an outbound
 * route and a first extension, in one transaction; then a deploy is scheduled.
 */
export async function approveRequest(
  deps: DomainDeps,
  id: string,
  options: { trunkHost: string },
): Promise<{ organization: OrganizationView; provisioned: ProvisionedResources }> {
  const org = await findPendingRequest(deps, id);
  const now = deps.clock().toISOString();
  const provisioned = await deps.db.transaction().execute(async (trx) => {
    await createOrganizationRepository(trx).update(id, {
      status: "active",
      request_status: "approved",
      decided_at: now,
      updated_at: now,
    });
    return provisionStarterResources(trx, org, {
      trunkHost: options.trunkHost,
      ownerName: org.requested_by_email?.split("@")[0] || "Owner",
    });
  });
  await notifyConfigChanged(deps, id);
  return { organization: organizationView(await findOrg(deps, id)), provisioned };
}

/** `POST /admin/organizations/{id}/reject`: the org stays inactive; the owner keeps seeing `awaiting approval`. */
export async function rejectRequest(
  deps: DomainDeps,
  id: string,
): Promise<OrganizationRequestView> {
  await findPendingRequest(deps, id);
  const now = deps.clock().toISOString();
  await createOrganizationRepository(deps.db).update(id, {
    status: "inactive",
    request_status: "rejected",
    decided_at: now,
    updated_at: now,
  });
  return requestView(await findOrg(deps, id));
}
