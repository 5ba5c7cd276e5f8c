// What the API answers for the compliance records (`/compliance/audit`, `/compliance/consent`):
// the response schemas, and (as `Static<>`) the view types the audit-log and consent use cases
// return. The actor kinds are listed here, once, for the domain's actors and the API's filter.
import { type Static, Type } from "@sinclair/typebox";
import { E164_PATTERN, RECORDING_CONSENT } from "./consent.js";
import { DateTime, Nullable, UuidString } from "./view-shapes.js";

/**
 * Who made a change. `cli` is `pbxctl apply` / `compliance purge` (an operator with the store);
 * `system` is the server's own scheduled work (the daily retention purge).
 */
export const ACTOR_KINDS = [
  "user",
  "org_key",
  "org_jwt",
  "api_key",
  "admin",
  "internal",
  "cli",
  "system",
] as const;
export type ActorKind = (typeof ACTOR_KINDS)[number];

const Json = Type.Unknown({ description: "JSON, secrets redacted" });

/** One leaf change of a record: its JSON path (`` for the whole resource), before and after. */
export const DiffEntrySchema = Type.Object({ path: Type.String(), before: Json, after: Json });
export type DiffEntry = Static<typeof DiffEntrySchema>;

/** An audit record as the API shows it. */
export const AuditRecordViewSchema = Type.Object(
  {
    id: Type.Integer(),
    org_id: Nullable(UuidString),
    created_at: DateTime,
    actor: Type.Object({
      kind: Type.String({ description: ACTOR_KINDS.join(" | ") }),
      id: Nullable(Type.String({ description: "platform user id, ak_ key id, admin user name" })),
    }),
    request_id: Type.String({ description: "the X-Request-Id of the change (a run id for cli)" }),
    resource_type: Type.String(),
    resource_id: Nullable(Type.String()),
    action: Type.String(),
    operation: Type.String({ description: "`PUT /users/{id}`, `pbxctl apply`" }),
    before: Json,
    after: Json,
    diff: Type.Array(DiffEntrySchema),
    schedules_deploy: Type.Boolean(),
    deploy_revision: Nullable(
      Type.String({
        description:
          "revision of the org's first successful deploy at or after the change (null: none asked, or not deployed yet)",
      }),
    ),
  },
  { title: "AuditRecord" },
);
export type AuditRecordView = Static<typeof AuditRecordViewSchema>;

export const E164PhoneSchema = Type.String({
  pattern: E164_PATTERN,
  description: "E.164, e.g. +15551234567",
});
export const RecordingConsentSchema = Type.Union(RECORDING_CONSENT.map((c) => Type.Literal(c)));

/** A number's recording consent as the API shows it. */
export const ConsentViewSchema = Type.Object(
  {
    id: UuidString,
    phone: E164PhoneSchema,
    recording_consent: RecordingConsentSchema,
    source: Type.String(),
    recorded_at: DateTime,
    created_at: DateTime,
  },
  { title: "ConsentRecord" },
);
export type ConsentView = Static<typeof ConsentViewSchema>;

/** A consent record as the store keeps it: the view and the org it belongs to. */
export type ConsentRecord = ConsentView & { org_id: string };
