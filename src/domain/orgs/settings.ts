// Org-level service settings (`/settings`): the recording switch and the concurrent call limit,
// both compiled into the org's dialplan, so a change schedules a deploy.
import type { OrgInfo } from "../../model/org-state.js";
import { createOrganizationRepository } from "../../store/organization-repository.js";
import type { OrganizationUpdate } from "../../store/schema.js";
import { notifyConfigChanged } from "../config/config-change.js";
import type { DomainDeps } from "../deps.js";
import { NotFound } from "../errors.js";

export type OrgSettingsView = OrgInfo["settings"];

/** `GET /settings`: the caller's org settings. */
export async function getSettings(deps: DomainDeps, orgId: string): Promise<OrgSettingsView> {
  const org = await createOrganizationRepository(deps.db).findById(orgId);
  if (!org) throw new NotFound("Organization not found");
  return {
    recording_enabled: org.recording_enabled === 1,
    max_concurrent_calls: org.max_concurrent_calls,
  };
}

/** `PUT /settings`: partial update (an omitted field keeps its value); schedules a deploy. */
export async function updateSettings(
  deps: DomainDeps,
  orgId: string,
  patch: Partial<OrgSettingsView>,
): Promise<OrgSettingsView> {
  const update: OrganizationUpdate = { updated_at: deps.clock().toISOString() };
  if (patch.recording_enabled !== undefined) {
    update.recording_enabled = patch.recording_enabled ? 1 : 0;
  }
  if (patch.max_concurrent_calls !== undefined) {
    update.max_concurrent_calls = patch.max_concurrent_calls;
  }
  await getSettings(deps, orgId);
  await createOrganizationRepository(deps.db).update(orgId, update);
  await notifyConfigChanged(deps, orgId);
  return getSettings(deps, orgId);
}
