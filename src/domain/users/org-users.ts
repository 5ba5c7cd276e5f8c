// Platform users of an org: people (identified by email, bound to the identity provider's
// subject on first sign-in) with a role that decides their permissions.
import { randomUUID } from "node:crypto";
import { type OrgUserView, OrgUserViewSchema } from "../../model/access-views.js";
import type { OrgUserRecord } from "../../model/stored-records.js";
import { viewOf } from "../../model/view-shapes.js";
import { createOrgUserRepository } from "../../store/org-user-repository.js";
import { permissionsOfRole, type Role } from "../access/permissions.js";
import type { DomainDeps } from "../deps.js";
import { BadRequest, Conflict, NotFound } from "../errors.js";

/** The public shape of a platform user: the record's fields the view shows, and the role's permissions. */
export function orgUserView(row: OrgUserRecord): OrgUserView {
  const role = row.role as Role;
  return viewOf(OrgUserViewSchema, { ...row, role, permissions: permissionsOfRole(role) });
}

/** Platform users of the org, by email. */
export async function listOrgUsers(deps: DomainDeps, orgId: string): Promise<OrgUserView[]> {
  return (await createOrgUserRepository(deps.db).listByOrg(orgId)).map(orgUserView);
}

/** Adds a person to the org; 409 when the email is already a member. */
export async function addOrgUser(
  deps: DomainDeps,
  orgId: string,
  input: { email: string; name?: string; role: Role },
): Promise<OrgUserView> {
  const email = input.email.trim().toLowerCase();
  const repo = createOrgUserRepository(deps.db);
  if ((await repo.listByOrg(orgId)).some((u) => u.email === email)) {
    throw new Conflict(`User ${email} is already a member of this organization`);
  }
  const now = deps.clock().toISOString();
  const row = await repo.insert({
    id: randomUUID(),
    org_id: orgId,
    email,
    subject: null,
    name: input.name ?? null,
    role: input.role,
    status: "active",
    created_at: now,
    updated_at: now,
  });
  return orgUserView(row);
}

async function findOrgUser(deps: DomainDeps, orgId: string, id: string): Promise<OrgUserRecord> {
  const row = await createOrgUserRepository(deps.db).findById(orgId, id);
  if (!row) throw new NotFound("Platform user not found");
  return row;
}

async function assertAnotherOwner(deps: DomainDeps, orgId: string, id: string): Promise<void> {
  const owners = (await createOrgUserRepository(deps.db).listByOrg(orgId)).filter(
    (u) => u.role === "owner" && u.status === "active" && u.id !== id,
  );
  if (owners.length === 0)
    throw new BadRequest("An organization must keep at least one active owner");
}

/** Changes name, role or status; the org always keeps one active owner. */
export async function updateOrgUser(
  deps: DomainDeps,
  orgId: string,
  id: string,
  patch: { name?: string; role?: Role; status?: "active" | "inactive" },
): Promise<OrgUserView> {
  const row = await findOrgUser(deps, orgId, id);
  const losesOwner =
    row.role === "owner" &&
    ((patch.role !== undefined && patch.role !== "owner") || patch.status === "inactive");
  if (losesOwner) await assertAnotherOwner(deps, orgId, id);
  const update: Partial<OrgUserRecord> = { updated_at: deps.clock().toISOString() };
  if (patch.name !== undefined) update.name = patch.name;
  if (patch.role !== undefined) update.role = patch.role;
  if (patch.status !== undefined) update.status = patch.status;
  await createOrgUserRepository(deps.db).update(orgId, id, update);
  return orgUserView(await findOrgUser(deps, orgId, id));
}

/** Removes a person from the org; their tokens stop working at once. */
export async function removeOrgUser(deps: DomainDeps, orgId: string, id: string): Promise<void> {
  const row = await findOrgUser(deps, orgId, id);
  if (row.role === "owner") await assertAnotherOwner(deps, orgId, id);
  await createOrgUserRepository(deps.db).delete(orgId, id);
}
