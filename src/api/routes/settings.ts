// Org-level settings (`/settings`): recording switch and concurrent call limit.
// Who: any org credential reads; changes need `org.manage` (org key, org JWT, internal key, or a
// user JWT with the owner or admin role).
import { Type } from "@sinclair/typebox";
import { getSettings, updateSettings } from "../../domain/orgs/settings.js";
import { OrgSettings } from "../../model/org-state.js";
import { orgCaller } from "../principals.js";
import { defineRoute } from "../registry.js";
import { modelField } from "../schemas.js";

const SettingsSchema = Type.Object(
  {
    recording_enabled: modelField(
      OrgSettings.properties.recording_enabled,
      "org-wide switch; false records no call whatever the user flags say",
    ),
    max_concurrent_calls: modelField(
      OrgSettings.properties.max_concurrent_calls,
      "calls over the limit hear a busy prompt; 0 = no limit",
    ),
  },
  { title: "OrgSettings" },
);

export const settingsRoutes = [
  defineRoute({
    method: "get",
    path: "/settings",
    tag: "Settings",
    summary: "The org's settings",
    auth: "org",
    responses: { 200: { description: "Settings", schema: SettingsSchema } },
    handler: ({ deps, principal }) => getSettings(deps, orgCaller(principal).orgId),
  }),

  defineRoute({
    method: "put",
    path: "/settings",
    tag: "Settings",
    summary: "Change the org's settings (partial); schedules a deploy",
    auth: "org",
    permission: "org.manage",
    body: Type.Object(
      {
        recording_enabled: Type.Optional(SettingsSchema.properties.recording_enabled),
        max_concurrent_calls: Type.Optional(SettingsSchema.properties.max_concurrent_calls),
      },
      { additionalProperties: false },
    ),
    responses: { 200: { description: "Settings", schema: SettingsSchema } },
    handler: ({ deps, body, principal }) => updateSettings(deps, orgCaller(principal).orgId, body),
  }),
];
