// Which inbound SIP traffic a trunk claims: the addresses its `type=identify` section matches
// (the compiler prints exactly this list), and whether two claims overlap. Asterisk gives a
// source address's requests to whichever identify section matched first, so a tenant whose trunk
// names an address or range another tenant's trunk already matches could take that tenant's
// carrier calls; the API, `apply` and `validate` refuse it with these functions.
import type { Trunk } from "./org-state.js";

/** An IPv4 address or a bracketed IPv6 address (the model's Host forms that are not names). */
export function isIpLiteral(host: string): boolean {
  return /^\d{1,3}(\.\d{1,3}){3}$/.test(host) || host.startsWith("[");
}

/**
 * What the trunk's identify section matches: its host when the host identifies it (a trunk that
 * does not register, or whose host is an address), then its `match` list.
 */
export function identifyMatches(trunk: Pick<Trunk, "host" | "registration" | "match">): string[] {
  const hostIdentifies = !trunk.registration || isIpLiteral(trunk.host);
  return hostIdentifies
    ? [trunk.host, ...trunk.match.filter((m) => m !== trunk.host)]
    : [...trunk.match];
}

/** An address range: family, first..last address as integers, and its CIDR prefix length. */
export interface Range {
  family: 4 | 6;
  first: bigint;
  last: bigint;
  prefix: number;
}

function ipv4(text: string): bigint | null {
  const parts = text.split(".");
  if (parts.length !== 4) return null;
  // In a double (exact below 2^53), one BigInt at the end: the checks across 10,000 org files
  // parse every trunk address of every file.
  let value = 0;
  for (const part of parts) {
    if (!/^\d{1,3}$/.test(part)) return null;
    const octet = Number(part);
    if (octet > 255) return null;
    value = value * 256 + octet;
  }
  return BigInt(value);
}

function ipv6(text: string): bigint | null {
  let head = text;
  let tail4: bigint | null = null;
  const dotted = /^(.*:)(\d{1,3}(?:\.\d{1,3}){3})$/.exec(text);
  if (dotted) {
    tail4 = ipv4(dotted[2]!);
    if (tail4 === null) return null;
    head = `${dotted[1]}0:0`;
  }
  const halves = head.split("::");
  if (halves.length > 2) return null;
  const groups = (part: string) => (part === "" ? [] : part.split(":"));
  const left = groups(halves[0]!);
  const right = halves.length === 2 ? groups(halves[1]!) : [];
  const missing = 8 - left.length - right.length;
  if (halves.length === 1 ? missing !== 0 : missing < 1) return null;
  const all = [...left, ...Array<string>(halves.length === 2 ? missing : 0).fill("0"), ...right];
  let value = 0n;
  for (const group of all) {
    if (!/^[0-9A-Fa-f]{1,4}$/.test(group)) return null;
    value = (value << 16n) | BigInt(Number.parseInt(group, 16));
  }
  return tail4 === null ? value : (value & ~0xffffffffn) | tail4;
}

/** The range an identify `match` entry covers; null for a host name (compared by name). */
export function matchRange(entry: string): Range | null {
  const slash = entry.indexOf("/");
  const addressText = (slash < 0 ? entry : entry.slice(0, slash)).replace(/^\[|\]$/g, "");
  const v4 = ipv4(addressText);
  const family = v4 !== null ? 4 : 6;
  const address = v4 ?? ipv6(addressText);
  if (address === null) return null;
  const bits = family === 4 ? 32 : 128;
  const prefix = slash < 0 ? bits : Number(entry.slice(slash + 1));
  if (!Number.isInteger(prefix) || prefix < 0 || prefix > bits) return null;
  const hostBits = BigInt(bits - prefix);
  const first = (address >> hostBits) << hostBits;
  return { family, first, last: first + (1n << hostBits) - 1n, prefix };
}

/** Whether two identify `match` entries claim a common source: overlapping ranges, or one name. */
export function matchesOverlap(a: string, b: string): boolean {
  const left = matchRange(a);
  const right = matchRange(b);
  if (left === null || right === null) {
    return left === null && right === null && a.toLowerCase() === b.toLowerCase();
  }
  return left.family === right.family && left.first <= right.last && right.first <= left.last;
}

/** The refusal for a claimed address: it never names the org that holds it. */
export function claimedAddressMessage(entry: string): string {
  return `${entry} is already matched by another organization's trunk`;
}
