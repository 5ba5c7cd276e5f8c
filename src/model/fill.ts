// What a hand-written org file may leave out, filled in deterministically: the same file always
// gives the same OrgState (and so byte-identical compiled output), with no clock or randomness.
import { hash } from "node:crypto";
import {
  COLLECTION_KINDS,
  COLLECTION_NAMES,
  type CollectionItem,
  type CollectionKind,
} from "./collections.js";
import type { OrgState } from "./org-state.js";

/** The context prefix an org gets when none is written: `org_<id>_`. */
export function defaultContextPrefix(orgId: string): string {
  return `org_${orgId}_`;
}

/**
 * A name-based UUID (RFC 9562 version 5, SHA-1) in the org's namespace: the same org id, kind
 * and key always give the same id, and different orgs never share one.
 */
export function deterministicId(orgId: string, kind: string, key: string): string {
  // One-shot hashing of one reused buffer that starts with the org's namespace bytes (the last
  // org's is kept), its hex digest patched into a UUID: a Hash object, then a buffer and a digest
  // buffer per id, were a tenth, then a twentieth, of loading an org file of many users.
  const name = `${kind}:${key}`;
  const { buffer, start } = nameBuffer(orgId, Buffer.byteLength(name));
  const length = start + buffer.write(name, start);
  const hex = hash("sha1", buffer.subarray(0, length), "hex");
  // Version 5 in the 13th digit; the variant's two bits (10) over the 17th.
  const variant = HEX_DIGITS[(Number.parseInt(hex[16]!, 16) & 0x3) | 0x8];
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-5${hex.slice(13, 16)}-${variant}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

const HEX_DIGITS = "0123456789abcdef";

let lastNamespace: { orgId: string; buffer: Buffer; start: number } | undefined;

/**
 * A buffer that starts with the namespace bytes of `orgId` (its hex digits; the dashes left
 * out; 16 bytes for a UUID), with room for a name of `nameBytes` from `start` on.
 */
function nameBuffer(orgId: string, nameBytes: number): { buffer: Buffer; start: number } {
  if (lastNamespace?.orgId !== orgId) {
    const namespace = Buffer.from(orgId.replace(/-/g, ""), "hex");
    const buffer = Buffer.alloc(namespace.length + 256);
    namespace.copy(buffer);
    lastNamespace = { orgId, buffer, start: namespace.length };
  }
  const { buffer, start } = lastNamespace;
  if (buffer.length < start + nameBytes) {
    lastNamespace.buffer = Buffer.alloc(start + nameBytes * 2);
    buffer.copy(lastNamespace.buffer, 0, 0, start);
  }
  return lastNamespace;
}

/**
 * Fills, in place, what a file may leave out: the context prefix and the id of every item of
 * every collection (derived from its natural key: extension, number or name).
 */
export function fillOmitted(state: OrgState): OrgState {
  lowerCaseIds(state);
  const orgId = state.org.id;
  state.org.context_prefix ??= defaultContextPrefix(orgId);
  for (const name of COLLECTION_NAMES) {
    const rules: CollectionKind<CollectionItem> = COLLECTION_KINDS[name];
    for (const item of state[name]) {
      item.id ??= deterministicId(orgId, rules.kind, rules.naturalKey(item));
    }
  }
  return state;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const lowerUuid = <T extends string | null | undefined>(value: T): T =>
  (typeof value === "string" && UUID.test(value) ? value.toLowerCase() : value) as T;

/**
 * UUIDs ignore letter case (RFC 9562): written ids, and references that are UUIDs, are kept in
 * lower case, as the store and the API hold them, so `/users/<id>` finds what a file created.
 */
function lowerCaseIds(state: OrgState): void {
  state.org.id = lowerUuid(state.org.id);
  for (const name of COLLECTION_NAMES) {
    for (const item of state[name]) {
      if (item.id !== undefined) item.id = lowerUuid(item.id);
    }
  }
  for (const ivr of state.ivrs) {
    for (const option of ivr.options)
      option.action_destination = lowerUuid(option.action_destination);
  }
  for (const did of state.dids) did.routing_destination = lowerUuid(did.routing_destination);
}
