// What the API answers for an org's deploys (`/config/*`, `/organizations/{id}/regenerate`): the
// response schemas, and (as `Static<>`) the view types the configuration use cases return.
import { type Static, Type } from "@sinclair/typebox";
import { DateTime, Nullable } from "./view-shapes.js";

const Revision = Type.String({ description: "SHA-256 over the unit's files sorted by path" });

/** One engine reload of a deploy or of `/config/reload`. */
export const ReloadViewSchema = Type.Object(
  {
    command: Type.String({ description: "the Asterisk CLI command sent over AMI" }),
    status: Type.Union([Type.Literal("ok"), Type.Literal("skipped"), Type.Literal("failed")], {
      description: "`skipped`: files-only engine, nothing to reload",
    }),
    attempts: Type.Integer(),
    duration_ms: Type.Integer(),
    output: Type.Optional(Type.String()),
    error: Type.Optional(Type.String()),
  },
  { title: "ReloadOutcome" },
);
export type ReloadView = Static<typeof ReloadViewSchema>;

/** What `/config/reload` answers: the reloads of the org's modules and the engine's health. */
export const ConfigReloadViewSchema = Type.Object({
  success: Type.Literal(true),
  unit: Type.String(),
  reloads: Type.Array(ReloadViewSchema),
  health: Nullable(Type.String()),
});
export type ConfigReloadView = Static<typeof ConfigReloadViewSchema>;

const FileList = Type.Array(Type.String({ description: "path relative to the engine directory" }));

/** What a deploy of an org changed (`/config/deploy`, `/organizations/{id}/regenerate`). */
export const DeployViewSchema = Type.Object(
  {
    success: Type.Boolean(),
    org_id: Type.String(),
    unit: Type.String({ description: "`org:<context_prefix>`" }),
    result: Type.Union([Type.Literal("ok"), Type.Literal("unchanged")], {
      description: "`unchanged`: nothing written, nothing reloaded",
    }),
    revision: Revision,
    previous_revision: Nullable(Revision),
    files_written: FileList,
    files_removed: FileList,
    reloads: Type.Array(ReloadViewSchema),
    health: Nullable(Type.String({ description: "engine health after the reloads" })),
    duration_ms: Type.Integer(),
    related: Type.Array(
      Type.Object({
        unit: Type.String(),
        result: Type.String(),
        files_written: FileList,
        files_removed: FileList,
      }),
      { description: "units deployed with the org (the top-level include files)" },
    ),
  },
  { title: "DeployResult" },
);
export type DeployView = Static<typeof DeployViewSchema>;

/** One recorded deploy of an org, in its status. */
export const DeployEntrySchema = Type.Object(
  {
    id: Type.String(),
    at: DateTime,
    trigger: Type.String({
      description: "`schedule`, `deploy`, `startup`, `reload`, `apply`, `rollback`",
    }),
    result: Type.Union([Type.Literal("ok"), Type.Literal("unchanged"), Type.Literal("failed")]),
    revision: Type.String(),
    files_written: FileList,
    files_removed: FileList,
    reloads: Type.Array(ReloadViewSchema),
    health: Nullable(Type.String()),
    duration_ms: Type.Integer(),
    error: Nullable(Type.String()),
  },
  { title: "DeployEntry" },
);

/**
 * What realtime PJSIP still owes an org (`PBX_PJSIP=realtime`): its users and trunks are database
 * rows the engine reads, live only once written and taken by every engine holding the org.
 */
export const RealtimePendingSchema = Type.Object(
  {
    unwritten: Type.Integer({
      minimum: 0,
      description:
        "the org's PJSIP rows (endpoint, auth, AOR, registration) not yet written as its " +
        "configuration compiles to now: a save's write running, or waiting for its retry",
    }),
    not_taken: Type.Integer({
      minimum: 0,
      description:
        "the org's changed PJSIP objects an engine holding it has not taken yet (cache expiry " +
        "or registrations reload owed), each counted once",
    }),
  },
  {
    title: "RealtimePending",
    description:
      "Realtime PJSIP mode only (absent in file mode): what keeps the org's users and trunks " +
      "from being live; any non-zero count makes `live` false",
  },
);

/** Desired beside applied revision of an org, and its last deploys (`/config/status`). */
export const StatusViewSchema = Type.Object(
  {
    org_id: Type.String(),
    unit: Type.String(),
    served: Type.Boolean({ description: "only active orgs have files in the engine" }),
    desired_revision: Nullable(Revision),
    applied_revision: Nullable(Revision),
    applied_at: Nullable(DateTime),
    live: Type.Boolean({
      description: "false = saved but not live: the engine does not run what the store holds",
    }),
    deploy_scheduled: Type.Boolean({ description: "a background deploy is waiting" }),
    compile_error: Nullable(Type.String()),
    deploys: Type.Array(DeployEntrySchema, { description: "newest first" }),
    realtime_pending: Type.Optional(RealtimePendingSchema),
  },
  { title: "ConfigStatus" },
);
export type StatusView = Static<typeof StatusViewSchema>;
