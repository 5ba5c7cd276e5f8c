// What the API answers for an organization, an org request and a customer tunnel: the response
// schemas of `/organizations` and `/customer-tunnels`, and (as `Static<>`) the view types their
// use cases return.
import { type Static, Type } from "@sinclair/typebox";
import { PlacementViewSchema } from "./node-views.js";
import { boundsOf, ORG_STATUSES, OrgSettings } from "./org-state.js";
import { DateTime, Nullable, UuidString } from "./view-shapes.js";

const OrgStatus = Type.Union(ORG_STATUSES.map((s) => Type.Literal(s)));

export const OrganizationViewSchema = Type.Object(
  {
    id: UuidString,
    name: Type.String(),
    slug: Nullable(
      Type.String({
        description:
          "unique short name (file names of `pbxctl export`); made from the name unless set",
      }),
    ),
    type: Type.String(),
    status: OrgStatus,
    context_prefix: Type.String({
      description: "`org_<id>_`: prefix of the org's engine contexts and channels",
    }),
    settings: Type.Object({
      recording_enabled: Type.Boolean(),
      max_concurrent_calls: Type.Integer(boundsOf(OrgSettings.properties.max_concurrent_calls)),
    }),
    created_at: DateTime,
    updated_at: DateTime,
  },
  { title: "Organization" },
);
export type OrganizationView = Static<typeof OrganizationViewSchema>;

/** An org as admins see it: with its engine node (docs/nodes.md); never shown to the org. */
export const AdminOrganizationViewSchema = Type.Composite(
  [
    OrganizationViewSchema,
    Type.Object({
      placement: Nullable(
        Type.Composite([PlacementViewSchema], {
          description: "its engine node; null when no node is defined (the one implicit engine)",
        }),
      ),
    }),
  ],
  { title: "AdminOrganization" },
);
export type AdminOrganizationView = Static<typeof AdminOrganizationViewSchema>;

/** An org born from a request, as its requester (or the admin deciding it) sees it. */
export const OrganizationRequestViewSchema = Type.Object(
  {
    id: UuidString,
    name: Type.String(),
    type: Type.String(),
    status: OrgStatus,
    request_status: Type.Union([
      Type.Literal("pending"),
      Type.Literal("approved"),
      Type.Literal("rejected"),
    ]),
    message: Type.String({ description: "`awaiting approval` until the org is active" }),
    created_at: DateTime,
    decided_at: Nullable(DateTime),
    requested_by: Type.Optional(Nullable(Type.String())),
  },
  { title: "OrganizationRequest" },
);
export type OrganizationRequestView = Static<typeof OrganizationRequestViewSchema>;

const WgKey = Type.String({ description: "WireGuard public key (base64 of 32 bytes)" });

/** A customer tunnel as the API shows it: never a private or preshared key. */
export const TunnelViewSchema = Type.Object(
  {
    id: UuidString,
    org_id: UuidString,
    name: Type.String(),
    interface: Type.String({ description: "the gateway's interface (and config file) name" }),
    listen_port: Type.Integer({ description: "UDP port the gateway listens on" }),
    gateway_address: Type.String({ description: "the gateway's tunnel address (CIDR)" }),
    customer_address: Type.String({ description: "the customer end's tunnel address (CIDR)" }),
    gateway_endpoint: Type.String({ description: "host:port the customer end connects to" }),
    customer_endpoint: Nullable(
      Type.String({ description: "host:port of the customer end, when it is reachable" }),
    ),
    customer_networks: Type.Array(Type.String(), {
      description: "ranges behind the customer end, routed through the tunnel",
    }),
    keepalive: Type.Integer({ description: "PersistentKeepalive of the customer end, seconds" }),
    staging: Type.Boolean({
      description: "the org's staging tunnel: its staging DIDs are dialled over it (SPEC §4.5)",
    }),
    staging_sip_port: Type.Integer({ description: "SIP port of the staging deployment" }),
    gateway_public_key: WgKey,
    customer_public_key: WgKey,
    created_at: DateTime,
    updated_at: DateTime,
  },
  { title: "CustomerTunnel" },
);
export type TunnelView = Static<typeof TunnelViewSchema>;

export const TUNNEL_STATUSES = ["connected", "no_handshake", "stale", "down", "unknown"] as const;
export type TunnelStatus = (typeof TUNNEL_STATUSES)[number];

/** A tunnel's live state from `wg show` (shown with the tunnel). */
export const TunnelStatusViewSchema = Type.Object({
  status: Type.Union(
    TUNNEL_STATUSES.map((s) => Type.Literal(s)),
    {
      description:
        "from `wg show <interface> dump` on the server: unknown without `wg` (or rights to ask), down without the interface or peer, else by the customer's last handshake (connected within 180 s)",
    },
  ),
  latest_handshake_at: Nullable(DateTime),
  rx_bytes: Nullable(Type.Integer()),
  tx_bytes: Nullable(Type.Integer()),
  peer_endpoint: Nullable(Type.String()),
});
export type TunnelStatusView = Static<typeof TunnelStatusViewSchema>;

/** A tunnel as stored: what the API shows, and its three keys sealed under the server key. */
export type CustomerTunnelRecord = TunnelView & {
  gateway_private_key: string;
  customer_private_key: string;
  preshared_key: string;
};
