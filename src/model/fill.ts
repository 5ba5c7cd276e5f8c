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
  // One-shot, into one buffer: a Hash object per id was a tenth of parsing an org file of many
  // users, and the namespace's bytes are the same for every id of an org (the last one is kept).
  const namespace = namespaceOf(orgId);
  const name = Buffer.allocUnsafe(
    namespace.length + Buffer.byteLength(kind) + 1 + Buffer.byteLength(key),
  );
  namespace.copy(name);
  name.write(`${kind}:${key}`, namespace.length);
  const bytes = hash("sha1", name, "buffer");
  bytes[6] = (bytes[6]! & 0x0f) | 0x50;
  bytes[8] = (bytes[8]! & 0x3f) | 0x80;
  const hex = bytes.toString("hex", 0, 16);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

let lastNamespace: { orgId: string; bytes: Buffer } | undefined;

/** The namespace bytes of `orgId` (its hex digits; the dashes left out). */
function namespaceOf(orgId: string): Buffer {
  if (lastNamespace?.orgId !== orgId) {
    lastNamespace = { orgId, bytes: Buffer.from(orgId.replace(/-/g, ""), "hex") };
  }
  return lastNamespace.bytes;
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
