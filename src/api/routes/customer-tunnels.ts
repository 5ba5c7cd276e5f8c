// Customer tunnels (`/customer-tunnels/*`, docs/tunnels.md): WireGuard tunnels from the gateway
// to customer sites. Admins (admin JWT) manage every org's tunnels under
// `/admin/customer-tunnels/*` and may download either end's `wg-quick` file; an org (any org
// credential) reads its own tunnels and downloads the customer end's file.
import { Type } from "@sinclair/typebox";
import {
  createTunnel,
  deleteTunnel,
  getTunnel,
  listTunnels,
  tunnelConfig,
  updateTunnel,
} from "../../domain/orgs/customer-tunnels.js";
import { ONE_LINE } from "../../model/org-state.js";
import { TunnelStatusViewSchema, TunnelViewSchema } from "../../model/org-views.js";
import { WG_CIDR, WG_ENDPOINT, WG_INTERFACE } from "../../model/wireguard.js";
import { orgCaller } from "../principals.js";
import { defineRoute, reply } from "../registry.js";
import { IdParams, Nullable, UuidString } from "../schemas.js";

const TunnelWithStatus = Type.Composite([TunnelViewSchema, TunnelStatusViewSchema], {
  title: "CustomerTunnelWithStatus",
});

const Cidr = Type.String({ pattern: WG_CIDR, description: "address/prefix, e.g. 10.99.0.1/30" });
const Endpoint = Type.String({
  pattern: WG_ENDPOINT,
  description: "host:port, e.g. vpn.example.com:51820 or [2001:db8::1]:51820",
});
const Port = Type.Integer({ minimum: 1, maximum: 65535 });

const editable = {
  name: Type.String({ minLength: 1, maxLength: 100, pattern: ONE_LINE }),
  listen_port: Type.Integer({
    minimum: 1,
    maximum: 65535,
    description: "default: the lowest free port from 51820",
  }),
  gateway_address: Cidr,
  customer_address: Cidr,
  gateway_endpoint: Endpoint,
  customer_endpoint: Nullable(Endpoint),
  customer_networks: Type.Array(Cidr, { maxItems: 50, description: "default none" }),
  keepalive: Type.Integer({ minimum: 0, maximum: 65535, description: "default 25; 0 is off" }),
  staging: Type.Boolean({
    description: "make this the org's staging tunnel (another one of the org stops being it)",
  }),
  staging_sip_port: { ...Port, description: "default 5060" },
};

const SideQuery = (sides: string) =>
  Type.Object(
    {
      side: Type.Optional(
        Type.Union([Type.Literal("gateway"), Type.Literal("customer")], {
          default: "customer",
          description: sides,
        }),
      ),
    },
    { additionalProperties: false },
  );

const ConfigFile = {
  description: "A wg-quick file (`wg-quick up ./<file>`)",
  contentType: "text/plain",
  schema: Type.String(),
};

function download(file: { fileName: string; text: string }) {
  return reply(200, file.text, {
    "content-type": "text/plain; charset=utf-8",
    "content-disposition": `attachment; filename="${file.fileName}"`,
    "cache-control": "no-store",
  });
}

export const customerTunnelRoutes = [
  defineRoute({
    method: "get",
    path: "/admin/customer-tunnels",
    tag: "Customer Tunnels",
    summary: "Every customer tunnel (or one org's), oldest first",
    auth: "admin",
    query: Type.Object({ org_id: Type.Optional(UuidString) }, { additionalProperties: false }),
    list: "envelope",
    responses: { 200: { description: "Tunnels", schema: Type.Array(TunnelViewSchema) } },
    handler: ({ deps, query }) => listTunnels(deps, { kind: "admin" }, query.org_id),
  }),
  defineRoute({
    method: "post",
    path: "/admin/customer-tunnels",
    tag: "Customer Tunnels",
    summary: "Create a tunnel to an org's site: new X25519 keys for both ends",
    description:
      "Private keys are stored sealed and are only ever returned inside the downloaded config of their own end. Marking it `staging` regenerates the gateway dispatch of the org's staging DIDs.",
    auth: "admin",
    body: Type.Object(
      {
        org_id: UuidString,
        name: editable.name,
        interface: Type.Optional(
          Type.String({
            pattern: WG_INTERFACE,
            description:
              "the gateway's interface name; default `wgc-` and the id's first 8 characters",
          }),
        ),
        listen_port: Type.Optional(editable.listen_port),
        gateway_address: editable.gateway_address,
        customer_address: editable.customer_address,
        gateway_endpoint: editable.gateway_endpoint,
        customer_endpoint: Type.Optional(editable.customer_endpoint),
        customer_networks: Type.Optional(editable.customer_networks),
        keepalive: Type.Optional(editable.keepalive),
        staging: Type.Optional(editable.staging),
        staging_sip_port: Type.Optional(editable.staging_sip_port),
      },
      { additionalProperties: false },
    ),
    responses: {
      201: { description: "The tunnel", schema: TunnelViewSchema },
      404: { description: "No such organization" },
      409: { description: "Interface name or listen port taken" },
    },
    handler: async ({ deps, body }) => reply(201, await createTunnel(deps, body)),
  }),
  defineRoute({
    method: "get",
    path: "/admin/customer-tunnels/{id}",
    tag: "Customer Tunnels",
    summary: "One tunnel with its live status",
    auth: "admin",
    params: IdParams,
    responses: { 200: { description: "The tunnel", schema: TunnelWithStatus } },
    handler: ({ deps, params }) => getTunnel(deps, { kind: "admin" }, params.id),
  }),
  defineRoute({
    method: "put",
    path: "/admin/customer-tunnels/{id}",
    tag: "Customer Tunnels",
    summary: "Change a tunnel (partial); its keys, org and interface stay",
    auth: "admin",
    params: IdParams,
    body: Type.Object(
      {
        name: Type.Optional(editable.name),
        listen_port: Type.Optional(editable.listen_port),
        gateway_address: Type.Optional(editable.gateway_address),
        customer_address: Type.Optional(editable.customer_address),
        gateway_endpoint: Type.Optional(editable.gateway_endpoint),
        customer_endpoint: Type.Optional(editable.customer_endpoint),
        customer_networks: Type.Optional(editable.customer_networks),
        keepalive: Type.Optional(editable.keepalive),
        staging: Type.Optional(editable.staging),
        staging_sip_port: Type.Optional(editable.staging_sip_port),
      },
      { additionalProperties: false },
    ),
    responses: {
      200: { description: "The tunnel", schema: TunnelViewSchema },
      409: { description: "Listen port taken" },
    },
    handler: ({ deps, params, body }) => updateTunnel(deps, params.id, body),
  }),
  defineRoute({
    method: "delete",
    path: "/admin/customer-tunnels/{id}",
    tag: "Customer Tunnels",
    summary: "Delete a tunnel (a staging tunnel's DIDs fall back to the staging endpoint)",
    auth: "admin",
    params: IdParams,
    responses: { 204: { description: "Deleted" } },
    handler: async ({ deps, params }) => {
      await deleteTunnel(deps, params.id);
      return reply(204);
    },
  }),
  defineRoute({
    method: "get",
    path: "/admin/customer-tunnels/{id}/config",
    tag: "Customer Tunnels",
    summary: "Download either end's wg-quick file",
    auth: "admin",
    params: IdParams,
    query: SideQuery("which end: `gateway` (the server's interface) or `customer` (default)"),
    responses: { 200: ConfigFile },
    handler: async ({ deps, params, query }) =>
      download(await tunnelConfig(deps, { kind: "admin" }, params.id, query.side ?? "customer")),
  }),
  defineRoute({
    method: "get",
    path: "/customer-tunnels",
    tag: "Customer Tunnels",
    summary: "The org's customer tunnels, oldest first",
    auth: "org",
    list: "envelope",
    responses: { 200: { description: "Tunnels", schema: Type.Array(TunnelViewSchema) } },
    handler: ({ deps, principal }) =>
      listTunnels(deps, { kind: "org", orgId: orgCaller(principal).orgId }),
  }),
  defineRoute({
    method: "get",
    path: "/customer-tunnels/{id}",
    tag: "Customer Tunnels",
    summary: "One of the org's tunnels with its live status",
    auth: "org",
    params: IdParams,
    responses: { 200: { description: "The tunnel", schema: TunnelWithStatus } },
    handler: ({ deps, principal, params }) =>
      getTunnel(deps, { kind: "org", orgId: orgCaller(principal).orgId }, params.id),
  }),
  defineRoute({
    method: "get",
    path: "/customer-tunnels/{id}/config",
    tag: "Customer Tunnels",
    summary: "Download the customer end's wg-quick file (with its private key)",
    description:
      "Holds a private key, so it needs `org.manage` (org key, org JWT, internal key, owner or admin role; never an `ak_` key). The gateway end (`side=gateway`) is for admins only: 403 here.",
    auth: "org",
    permission: "org.manage",
    params: IdParams,
    query: SideQuery("`customer` (default); `gateway` is refused (403)"),
    responses: { 200: ConfigFile },
    handler: async ({ deps, principal, params, query }) =>
      download(
        await tunnelConfig(
          deps,
          { kind: "org", orgId: orgCaller(principal).orgId },
          params.id,
          query.side ?? "customer",
        ),
      ),
  }),
];
