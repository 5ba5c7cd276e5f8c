// The edge's run-time data (issue 26): a dispatcher set per node, the org table (context prefix
// -> the node's set, then the standby's), the DID table (every alias -> context prefix) and the
// carriers' addresses. Only checked values get here: every key and value is held to a character
// set Kamailio's files, its db_text tables and its routing script read as plain data, and
// anything else is dropped with an error diagnostic, never escaped into the file.
import { SIP_ADDRESS } from "../../model/engine-node.js";
import { isIpv4, isIpv6 } from "../../model/wireguard.js";
import type { Diagnostic } from "../types.js";
import type { EdgeState } from "./edge-state.js";

/** One destination of the dispatcher list: the node's set id, URI and state flags. */
export interface DispatcherEntry {
  set: number;
  uri: string;
  /** 0: routed and probed; 4: disabled (node `down`: its orgs go to their standby). */
  flags: 0 | 4;
  node: string;
}

/** A carrier source address, as the permissions module's `address` table holds it. */
export interface CarrierAddress {
  ip: string;
  mask: number;
}

export interface EdgeTables {
  dispatcher: DispatcherEntry[];
  /** context prefix -> `<primary set>` or `<primary set>,<standby set>`. */
  orgs: Map<string, string>;
  /** DID alias -> context prefix. */
  dids: Map<string, string>;
  carriers: CarrierAddress[];
}

const NODE_NAME = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;
const CONTEXT_PREFIX = /^[A-Za-z][A-Za-z0-9_-]{0,46}_$/;
const DID_ALIAS = /^\+?[0-9]{6,16}$/;
const SIP_ADDRESS_PATTERN = new RegExp(SIP_ADDRESS);

/** The tables of this edge state; what cannot be used safely is reported and left out. */
export function buildEdgeTables(state: EdgeState, diagnostics: Diagnostic[]): EdgeTables {
  const sets = new Map<string, number>();
  const dispatcher: DispatcherEntry[] = [];
  state.nodes.forEach((node, index) => {
    const path = `nodes[${index}]`;
    if (!NODE_NAME.test(node.name) || sets.has(node.name)) {
      diagnostics.push({ severity: "error", path, message: "node name is not a unique node name" });
      return;
    }
    if (!SIP_ADDRESS_PATTERN.test(node.sip_address)) {
      diagnostics.push({
        severity: "error",
        path: `${path}.sip_address`,
        message: `node ${node.name}: SIP address is not host or host:port`,
      });
      return;
    }
    if (node.sip_address.startsWith("[") && !state.listen.sip_address.includes(":")) {
      diagnostics.push({
        severity: "warning",
        path: `${path}.sip_address`,
        message: `node ${node.name}: an IPv6 address, but the edge listens on IPv4 and cannot reach it`,
      });
    }
    // Sets are numbered in node-name order (nodes arrive sorted), from 1.
    const set = dispatcher.length + 1;
    sets.set(node.name, set);
    dispatcher.push({
      set,
      uri: `sip:${node.sip_address}`,
      flags: node.state === "down" ? 4 : 0,
      node: node.name,
    });
  });

  const orgs = new Map<string, string>();
  const dids = new Map<string, string>();
  state.orgs.forEach((org, index) => {
    const path = `orgs[${index}]`;
    if (!CONTEXT_PREFIX.test(org.context_prefix) || orgs.has(org.context_prefix)) {
      diagnostics.push({
        severity: "error",
        path: `${path}.context_prefix`,
        message: `org ${org.org_id}: context prefix is not a unique context prefix`,
      });
      return;
    }
    const primary = sets.get(org.primary);
    if (primary === undefined) {
      diagnostics.push({
        severity: "error",
        path: `${path}.primary`,
        message: `org ${org.org_id}: placed on an unknown node`,
      });
      return;
    }
    const standby = org.standby === null ? undefined : sets.get(org.standby);
    if (org.standby !== null && (standby === undefined || standby === primary)) {
      diagnostics.push({
        severity: "warning",
        path: `${path}.standby`,
        message: `org ${org.org_id}: standby is not another known node; routed to its primary only`,
      });
    }
    const usableStandby = standby !== undefined && standby !== primary ? standby : undefined;
    orgs.set(
      org.context_prefix,
      usableStandby === undefined ? `${primary}` : `${primary},${usableStandby}`,
    );
    for (const alias of org.dids) {
      if (!DID_ALIAS.test(alias)) {
        diagnostics.push({
          severity: "error",
          path: `${path}.dids`,
          message: `org ${org.org_id}: DID is not a number`,
        });
        continue;
      }
      const taken = dids.get(alias);
      if (taken !== undefined) {
        diagnostics.push({
          severity: "error",
          path: `${path}.dids`,
          message: `DID ${alias} is also assigned to ${taken}`,
        });
        continue;
      }
      dids.set(alias, org.context_prefix);
    }
  });

  const carriers: CarrierAddress[] = [];
  state.carriers.forEach((carrier, index) => {
    const address = carrierAddress(carrier);
    if (address === null) {
      diagnostics.push({
        severity: "warning",
        path: `carriers[${index}]`,
        message: `carrier ${JSON.stringify(carrier)} is not an IP address or range: the edge admits carriers by source address only, so it is left out`,
      });
      return;
    }
    carriers.push(address);
  });
  return { dispatcher, orgs, dids, carriers };
}

/** `10.0.0.1`, `10.0.0.0/24`, `2001:db8::1`, `[2001:db8::1]`, `2001:db8::/32`; else null. */
function carrierAddress(value: string): CarrierAddress | null {
  const [rawIp = "", rawMask, extra] = value.split("/");
  if (extra !== undefined) return null;
  const ip = rawIp.startsWith("[") && rawIp.endsWith("]") ? rawIp.slice(1, -1) : rawIp;
  const width = isIpv4(ip) ? 32 : isIpv6(ip) ? 128 : null;
  if (width === null) return null;
  if (rawMask === undefined) return { ip: ip.toLowerCase(), mask: width };
  if (!/^[0-9]{1,3}$/.test(rawMask) || Number(rawMask) > width) return null;
  const mask = Number(rawMask);
  // The range's own address, as Kamailio holds (and reads back) it: 203.0.113.6/24 -> .0/24.
  return { ip: width === 32 ? ipv4Network(ip, mask) : ip.toLowerCase(), mask };
}

function ipv4Network(ip: string, mask: number): string {
  const value = ip.split(".").reduce((sum, octet) => sum * 256 + Number(octet), 0);
  const network = mask === 0 ? 0 : value - (value % 2 ** (32 - mask));
  return [24, 16, 8, 0].map((shift) => Math.floor(network / 2 ** shift) % 256).join(".");
}
