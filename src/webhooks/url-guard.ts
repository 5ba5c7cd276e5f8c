// Which URLs a webhook may target. Only http(s); and unless PBX_WEBHOOK_ALLOW_PRIVATE=1, never
// an address on a loopback, link-local, private, unique-local or otherwise non-public range
// (SSRF guard). Saving a webhook checks what it can without the network (an IP literal, a
// `localhost` name: src/domain/webhooks/webhook-rules.ts); a host name is resolved when each connection is
// made (http-client.ts), where
// every address it resolves to is checked, so saving works offline and DNS rebinding does not
// slip by.
import { BlockList, isIP } from "node:net";

const nonPublic = new BlockList();
for (const [network, prefix] of [
  ["0.0.0.0", 8], // "this" network
  ["10.0.0.0", 8], // private
  ["100.64.0.0", 10], // carrier-grade NAT
  ["127.0.0.0", 8], // loopback
  ["169.254.0.0", 16], // link-local (cloud metadata lives here)
  ["172.16.0.0", 12], // private
  ["192.0.0.0", 24], // IETF protocol assignments
  ["192.168.0.0", 16], // private
  ["198.18.0.0", 15], // benchmarking
  ["224.0.0.0", 4], // multicast
  ["240.0.0.0", 4], // reserved, broadcast
] as const) {
  nonPublic.addSubnet(network, prefix, "ipv4");
}
for (const [network, prefix] of [
  ["::", 128], // unspecified
  ["::1", 128], // loopback
  ["64:ff9b::", 96], // NAT64: may map to an internal IPv4 address
  ["fc00::", 7], // unique-local
  ["fe80::", 10], // link-local
  ["ff00::", 8], // multicast
] as const) {
  nonPublic.addSubnet(network, prefix, "ipv6");
}

/** True for an address a webhook must not reach by default (IPv4-mapped IPv6 included). */
export function isNonPublicAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 4) return nonPublic.check(address, "ipv4");
  if (family === 6) {
    // BlockList matches IPv4 rules against ::ffff:a.b.c.d itself.
    return nonPublic.check(address, "ipv6");
  }
  return true;
}

export interface UrlPolicy {
  allowPrivate: boolean;
}

/** The refusal names the switch, so the operator of a private receiver knows what to set. */
export const PRIVATE_TARGET_MESSAGE =
  "url must not point to a loopback, link-local or private address " +
  "(the server allows them with PBX_WEBHOOK_ALLOW_PRIVATE=1)";
