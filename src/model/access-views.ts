// What the API answers for an `ak_` API key (`/api-keys`): the 16 permissions a key may hold (the
// domain's permission rules and the API's request schemas take them from here), the response
// schema, and (as `Static<>`) the view type the API-key use cases return.
import { type Static, Type } from "@sinclair/typebox";
import { DateTime, Nullable, UuidString } from "./view-shapes.js";

export const API_KEY_PERMISSIONS = [
  "calls.read",
  "calls.write",
  "calls.click_to_call",
  "calls.originate_ai",
  "calls.recording",
  "calls.live",
  "calls.transfer",
  "calls.hangup",
  "calls.hold",
  "crm.read",
  "crm.write",
  "crm.delete",
  "crm.assign",
  "crm.customize",
  "tickets.read",
  "tickets.write",
] as const;

export type ApiKeyPermission = (typeof API_KEY_PERMISSIONS)[number];

export const ApiKeyPermissionSchema = Type.Union(API_KEY_PERMISSIONS.map((p) => Type.Literal(p)));

/** A key as the API shows it: never the key or its secret after the creation answer. */
export const ApiKeyViewSchema = Type.Object(
  {
    id: UuidString,
    name: Type.String(),
    key_prefix: Type.String({ description: "first characters of the key, to recognise it" }),
    permissions: Type.Array(ApiKeyPermissionSchema),
    revoked: Type.Boolean(),
    revoked_at: Nullable(DateTime),
    created_at: DateTime,
  },
  { title: "ApiKey" },
);
export type ApiKeyView = Static<typeof ApiKeyViewSchema>;

/**
 * A key as the store keeps it: the view's fields (without `revoked`, which `revoked_at` says),
 * its org, and the SHA-256 digest of the key and the scrypt hash of the secret that check a
 * presented credential.
 */
export type ApiKey = Omit<ApiKeyView, "revoked"> & {
  org_id: string;
  key_digest: string;
  secret_hash: string;
};
