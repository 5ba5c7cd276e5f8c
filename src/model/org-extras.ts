// What an org file may hold beside the engine configuration: the org's webhooks and its
// platform users with their roles. They are configuration (export writes them, apply reconciles
// them) but the compiler never sees them, so they live beside OrgState rather than in it.
// Secrets never appear: a webhook's signing secret stays in the store.
import { type Static, Type } from "@sinclair/typebox";
import { Name, ONE_LINE, Uuid } from "./org-state.js";

/** The roles of a platform user (`src/domain/access/permissions.ts` gives each its permissions). */
export const MEMBER_ROLES = ["owner", "admin", "manager", "agent", "viewer"] as const;

export const OrgWebhook = Type.Object(
  {
    id: Type.Optional(Uuid),
    url: Type.String({ minLength: 1, maxLength: 2048, pattern: ONE_LINE }),
    events: Type.Array(Type.String({ maxLength: 64, pattern: ONE_LINE }), { minItems: 1 }),
    active: Type.Boolean({ default: true }),
    retry_count: Type.Optional(Type.Integer({ minimum: 0 })),
    /** Per-attempt timeout in milliseconds. */
    timeout: Type.Optional(Type.Integer({ minimum: 1 })),
  },
  {
    additionalProperties: false,
    description: "no secret: a webhook's signing secret is never exported (PUT /webhooks/{id})",
  },
);

export const OrgMember = Type.Object(
  {
    id: Type.Optional(Uuid),
    email: Type.String({ minLength: 3, maxLength: 254, pattern: ONE_LINE }),
    name: Type.Union([Name, Type.Null()], { default: null }),
    role: Type.Union(
      MEMBER_ROLES.map((role) => Type.Literal(role)),
      { description: MEMBER_ROLES.join(", ") },
    ),
    status: Type.Union([Type.Literal("active"), Type.Literal("inactive")], { default: "active" }),
  },
  { additionalProperties: false },
);

/** The optional sections; a section left out of a file leaves the store's as it is. */
export const OrgExtrasProperties = {
  webhooks: Type.Optional(Type.Array(OrgWebhook)),
  org_users: Type.Optional(Type.Array(OrgMember)),
};

export type OrgWebhook = Static<typeof OrgWebhook>;
export type OrgMember = Static<typeof OrgMember>;
export interface OrgExtras {
  webhooks?: OrgWebhook[];
  org_users?: OrgMember[];
}
