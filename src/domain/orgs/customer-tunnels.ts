// Customer tunnels (`/customer-tunnels/*`, docs/tunnels.md): WireGuard tunnels from the gateway
// to customer sites. Admins create, change and delete them for an org; the org reads its own and
// downloads the customer end's `wg-quick` file. Keys are X25519 pairs from node:crypto; private
// keys and the preshared key are stored sealed under the server key and leave the service only
// inside the config of the side that owns them (the gateway's file is for admins only). The
// org's tunnel marked `staging` carries its staging DIDs (SPEC.md §4.5): a change schedules a
// deploy, which regenerates the gateway.
import { execFile } from "node:child_process";
import { generateKeyPairSync, randomBytes, randomUUID } from "node:crypto";
import {
  type CustomerTunnelRecord,
  type TunnelStatusView,
  type TunnelView,
  TunnelViewSchema,
} from "../../model/org-views.js";
import { viewOf } from "../../model/view-shapes.js";
import {
  hostRange,
  parseCidr,
  parseEndpoint,
  parseWgDump,
  renderWgQuick,
} from "../../model/wireguard.js";
import { isUniqueViolationOf } from "../../store/constraint-errors.js";
import {
  clearStagingExcept,
  deleteCustomerTunnel,
  findCustomerTunnel,
  insertCustomerTunnel,
  listCustomerTunnels,
  updateCustomerTunnel,
} from "../../store/customer-tunnel-repository.js";
import type { Db } from "../../store/database.js";
import { createOrganizationRepository } from "../../store/organization-repository.js";
import { notifyConfigChanged } from "../config/config-change.js";
import type { DomainDeps } from "../deps.js";
import { BadRequest, Conflict, Forbidden, NotFound } from "../errors.js";
import { decrypt, encrypt } from "../secrets.js";

/** First listen port handed out when the admin names none (WireGuard's customary port). */
export const FIRST_LISTEN_PORT = 51820;
/** A handshake older than this (seconds) means the peer is not talking (WireGuard rekeys every 120 s). */
export const HANDSHAKE_FRESH_SECONDS = 180;

export type TunnelSide = "gateway" | "customer";

export interface TunnelInput {
  name?: string;
  interface?: string;
  listen_port?: number;
  gateway_address?: string;
  customer_address?: string;
  gateway_endpoint?: string;
  customer_endpoint?: string | null;
  customer_networks?: string[];
  keepalive?: number;
  staging?: boolean;
  staging_sip_port?: number;
}

/** Who asks: an admin sees every tunnel, an org only its own. */
export type TunnelViewer = { kind: "admin" } | { kind: "org"; orgId: string };

function view(record: CustomerTunnelRecord): TunnelView {
  return viewOf(TunnelViewSchema, record);
}

/** A WireGuard key pair: raw 32-byte X25519 keys in standard base64, as `wg genkey | wg pubkey`. */
export function wireguardKeyPair(): { privateKey: string; publicKey: string } {
  const { publicKey, privateKey } = generateKeyPairSync("x25519");
  const raw = (jwkValue: string | undefined) =>
    Buffer.from(jwkValue ?? "", "base64url").toString("base64");
  return {
    privateKey: raw(privateKey.export({ format: "jwk" }).d),
    publicKey: raw(publicKey.export({ format: "jwk" }).x),
  };
}

// The rules a tunnel's addresses, ranges and endpoints obey (the schemas check the characters).
function checkTunnel(row: CustomerTunnelRecord): void {
  const gateway = parseCidr(row.gateway_address);
  const customer = parseCidr(row.customer_address);
  if (!gateway) {
    throw new BadRequest(
      `gateway_address ${row.gateway_address} is not an address with a prefix length (10.99.0.1/30)`,
    );
  }
  if (!customer) {
    throw new BadRequest(
      `customer_address ${row.customer_address} is not an address with a prefix length (10.99.0.2/30)`,
    );
  }
  if (gateway.family !== customer.family) {
    throw new BadRequest("gateway_address and customer_address must both be IPv4 or both IPv6");
  }
  if (gateway.address.toLowerCase() === customer.address.toLowerCase()) {
    throw new BadRequest("gateway_address and customer_address must be different addresses");
  }
  row.customer_networks.forEach((range, index) => {
    if (!parseCidr(range)) {
      throw new BadRequest(
        `customer_networks[${index}] ${range} is not an address range (192.168.10.0/24)`,
      );
    }
  });
  if (!parseEndpoint(row.gateway_endpoint)) {
    throw new BadRequest(
      `gateway_endpoint ${row.gateway_endpoint} is not host:port with a port of 1-65535`,
    );
  }
  if (row.customer_endpoint !== null && !parseEndpoint(row.customer_endpoint)) {
    throw new BadRequest(
      `customer_endpoint ${row.customer_endpoint} is not host:port with a port of 1-65535`,
    );
  }
}

function apply(row: CustomerTunnelRecord, input: TunnelInput): CustomerTunnelRecord {
  const next = { ...row };
  if (input.name !== undefined) next.name = input.name;
  if (input.listen_port !== undefined) next.listen_port = input.listen_port;
  if (input.gateway_address !== undefined) next.gateway_address = input.gateway_address;
  if (input.customer_address !== undefined) next.customer_address = input.customer_address;
  if (input.gateway_endpoint !== undefined) next.gateway_endpoint = input.gateway_endpoint;
  if (input.customer_endpoint !== undefined) next.customer_endpoint = input.customer_endpoint;
  if (input.customer_networks !== undefined) {
    next.customer_networks = [...new Set(input.customer_networks)];
  }
  if (input.keepalive !== undefined) next.keepalive = input.keepalive;
  if (input.staging !== undefined) next.staging = input.staging;
  if (input.staging_sip_port !== undefined) next.staging_sip_port = input.staging_sip_port;
  return next;
}

function conflictOf(error: unknown, row: CustomerTunnelRecord): never {
  if (isUniqueViolationOf(error, "customer_tunnels", "interface")) {
    throw new Conflict(`Interface ${row.interface} is already used by another tunnel`);
  }
  if (isUniqueViolationOf(error, "customer_tunnels", "listen_port")) {
    throw new Conflict(`Listen port ${row.listen_port} is already used by another tunnel`);
  }
  throw error;
}

// Only one staging tunnel per org: marking one clears the others (in the caller's transaction).
async function clearOtherStaging(trx: Db, row: CustomerTunnelRecord): Promise<void> {
  if (!row.staging) return;
  await clearStagingExcept(trx, row.org_id, row.id);
}

async function visibleTunnel(
  db: Db,
  viewer: TunnelViewer,
  id: string,
): Promise<CustomerTunnelRecord> {
  const row = await findCustomerTunnel(db, id);
  if (!row) throw new NotFound("Tunnel not found");
  if (viewer.kind === "org" && row.org_id !== viewer.orgId) throw new Forbidden("Access denied");
  return row;
}

/** `GET /customer-tunnels`: an org's own tunnels, or (admin) all, or one org's with `orgId`. */
export async function listTunnels(
  deps: DomainDeps,
  viewer: TunnelViewer,
  orgId?: string,
): Promise<TunnelView[]> {
  const scope = viewer.kind === "org" ? viewer.orgId : orgId;
  return (await listCustomerTunnels(deps.db, scope)).map(view);
}

/** `GET /customer-tunnels/{id}`: the tunnel and its live status. */
export async function getTunnel(
  deps: DomainDeps,
  viewer: TunnelViewer,
  id: string,
  wg: WgShow = runWgShow,
): Promise<TunnelView & TunnelStatusView> {
  const row = await visibleTunnel(deps.db, viewer, id);
  return { ...view(row), ...(await tunnelStatus(row, wg, deps.clock())) };
}

/** `POST /customer-tunnels` (admin): new keys for both ends; 409 on a taken interface or port. */
export async function createTunnel(
  deps: DomainDeps,
  input: TunnelInput & {
    org_id: string;
    name: string;
    gateway_address: string;
    customer_address: string;
    gateway_endpoint: string;
  },
): Promise<TunnelView> {
  const org = await createOrganizationRepository(deps.db).findById(input.org_id);
  if (!org) throw new NotFound("Organization not found");
  const id = randomUUID();
  const now = deps.clock().toISOString();
  const gateway = wireguardKeyPair();
  const customer = wireguardKeyPair();
  const key = deps.config.serverKey;
  const row = await deps.db.transaction().execute(async (trx) => {
    const taken = new Set((await listCustomerTunnels(trx)).map((t) => t.listen_port));
    let port = FIRST_LISTEN_PORT;
    while (taken.has(port)) port++;
    const base: CustomerTunnelRecord = {
      id,
      org_id: org.id,
      name: input.name,
      interface: input.interface ?? `wgc-${id.slice(0, 8)}`,
      listen_port: port,
      gateway_address: input.gateway_address,
      customer_address: input.customer_address,
      gateway_endpoint: input.gateway_endpoint,
      customer_endpoint: null,
      customer_networks: [],
      keepalive: 25,
      staging: false,
      staging_sip_port: 5060,
      gateway_public_key: gateway.publicKey,
      customer_public_key: customer.publicKey,
      gateway_private_key: encrypt(gateway.privateKey, key),
      customer_private_key: encrypt(customer.privateKey, key),
      preshared_key: encrypt(randomBytes(32).toString("base64"), key),
      created_at: now,
      updated_at: now,
    };
    const created = apply(base, input);
    checkTunnel(created);
    await clearOtherStaging(trx, created);
    try {
      await insertCustomerTunnel(trx, created);
    } catch (error) {
      conflictOf(error, created);
    }
    return created;
  });
  await notifyConfigChanged(deps, row.org_id);
  return view(row);
}

/** `PUT /customer-tunnels/{id}` (admin): partial; keys, org and interface never change. */
export async function updateTunnel(
  deps: DomainDeps,
  id: string,
  input: TunnelInput,
): Promise<TunnelView> {
  const row = await deps.db.transaction().execute(async (trx) => {
    const current = await visibleTunnel(trx, { kind: "admin" }, id);
    const next = { ...apply(current, input), updated_at: deps.clock().toISOString() };
    checkTunnel(next);
    await clearOtherStaging(trx, next);
    try {
      await updateCustomerTunnel(trx, next);
    } catch (error) {
      conflictOf(error, next);
    }
    return next;
  });
  await notifyConfigChanged(deps, row.org_id);
  return view(row);
}

/** `DELETE /customer-tunnels/{id}` (admin). */
export async function deleteTunnel(deps: DomainDeps, id: string): Promise<void> {
  const row = await visibleTunnel(deps.db, { kind: "admin" }, id);
  await deleteCustomerTunnel(deps.db, id);
  await notifyConfigChanged(deps, row.org_id);
}

/**
 * `GET /customer-tunnels/{id}/config?side=`: the `wg-quick` file of one end. The customer's end
 * is for the org and admins; the gateway's end (its private key) for admins only.
 */
export async function tunnelConfig(
  deps: DomainDeps,
  viewer: TunnelViewer,
  id: string,
  side: TunnelSide,
): Promise<{ fileName: string; text: string }> {
  const row = await visibleTunnel(deps.db, viewer, id);
  if (side === "gateway" && viewer.kind !== "admin") {
    throw new Forbidden("Only an admin may download the gateway side of a tunnel");
  }
  const key = deps.config.serverKey;
  const networks = row.customer_networks;
  const presharedKey = decrypt(row.preshared_key, key);
  const comments = [
    `pbxctl customer tunnel ${row.id} (${row.name}), ${side} side. Keep this file private.`,
  ];
  const text =
    side === "gateway"
      ? renderWgQuick({
          comments,
          privateKey: decrypt(row.gateway_private_key, key),
          addresses: [row.gateway_address],
          listenPort: row.listen_port,
          peer: {
            publicKey: row.customer_public_key,
            presharedKey,
            allowedIps: [hostRange(row.customer_address), ...networks],
            ...(row.customer_endpoint !== null ? { endpoint: row.customer_endpoint } : {}),
          },
        })
      : renderWgQuick({
          comments,
          privateKey: decrypt(row.customer_private_key, key),
          addresses: [row.customer_address],
          peer: {
            publicKey: row.gateway_public_key,
            presharedKey,
            allowedIps: [hostRange(row.gateway_address)],
            endpoint: row.gateway_endpoint,
            persistentKeepalive: row.keepalive,
          },
        });
  // wg-quick names the interface after the file: the gateway's interface, `wg0` at the customer.
  return { fileName: side === "gateway" ? `${row.interface}.conf` : "wg0.conf", text };
}

/** Runs `wg show <iface> dump`: the dump, or why it could not (`missing`: no `wg` on PATH). */
export type WgShow = (
  iface: string,
) => Promise<{ ok: true; dump: string } | { ok: false; missing: boolean; message: string }>;

/** `wg show <iface> dump` through execFile (no shell), 5 s at most. */
export const runWgShow: WgShow = (iface) =>
  new Promise((resolve) => {
    execFile("wg", ["show", iface, "dump"], { timeout: 5000 }, (error, stdout, stderr) => {
      if (!error) resolve({ ok: true, dump: String(stdout) });
      else {
        const missing = (error as NodeJS.ErrnoException).code === "ENOENT";
        resolve({ ok: false, missing, message: String(stderr || error.message) });
      }
    });
  });

/**
 * The tunnel's state from `wg show`: `unknown` without `wg` (or when it cannot ask), `down` when
 * the gateway has no such interface, else by the customer peer's last handshake.
 */
export async function tunnelStatus(
  row: Pick<CustomerTunnelRecord, "interface" | "customer_public_key">,
  wg: WgShow,
  now: Date,
): Promise<TunnelStatusView> {
  const none = { latest_handshake_at: null, rx_bytes: null, tx_bytes: null, peer_endpoint: null };
  const shown = await wg(row.interface);
  if (!shown.ok) {
    const down = !shown.missing && /No such device/i.test(shown.message);
    return { status: down ? "down" : "unknown", ...none };
  }
  const dump = parseWgDump(shown.dump);
  const peer = dump?.peers.find((p) => p.publicKey === row.customer_public_key);
  if (!dump) return { status: "unknown", ...none };
  if (!peer) return { status: "down", ...none };
  const details = {
    latest_handshake_at:
      peer.latestHandshake > 0 ? new Date(peer.latestHandshake * 1000).toISOString() : null,
    rx_bytes: peer.rxBytes,
    tx_bytes: peer.txBytes,
    peer_endpoint: peer.endpoint,
  };
  if (peer.latestHandshake === 0) return { status: "no_handshake", ...details };
  const age = now.getTime() / 1000 - peer.latestHandshake;
  return { status: age <= HANDSHAKE_FRESH_SECONDS ? "connected" : "stale", ...details };
}
