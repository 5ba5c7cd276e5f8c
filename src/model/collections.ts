// The one table of an org's collections of resources (users, queues, IVRs, DIDs, trunks,
// outbound routes, time conditions): the natural key a file's item is matched and its id seeded by, and how an
// item is named in messages and impact lines. Where a collection is loaded (store/load-org-state.ts),
// exported (domain/config/export.ts) and applied (domain/config/apply.ts) are tables keyed by CollectionName
// in those layers, so a new collection fails to compile until each of them handles it.
import type { OrgState } from "./org-state.js";
import { internationalDigits } from "./phone.js";

/** The org's collections, in OrgState order (the order ids are filled and lists validated in). */
export const COLLECTION_NAMES = [
  "users",
  "queues",
  "ivrs",
  "dids",
  "trunks",
  "outbound_routes",
  "time_conditions",
] as const satisfies readonly (keyof OrgState)[];

export type CollectionName = (typeof COLLECTION_NAMES)[number];
export type ItemOf<C extends CollectionName> = OrgState[C][number];
/** An item of any collection. */
export type CollectionItem = ItemOf<CollectionName>;

/** The rules of one collection. Methods (not arrow properties), so a table entry of one item type can stand for any. */
export interface CollectionKind<T> {
  /** The singular kind: the namespace of a derived id and apply's change kind. */
  kind: string;
  /**
   * What identifies an item when it has no id: a file's item is matched to the stored one by it
   * (apply, impact lines) and a missing id is derived from it (fill).
   */
  naturalKey(item: T): string;
  /** What a person recognises in apply's change list: the extension, number or name. */
  changeKey(item: T): string;
  /** Who an error message is about: `IVR 'Main'`. */
  owner(item: T): string;
  /** How an impact line names the item: `ivr Main (5000)`. */
  label(item: T): string;
}

export const COLLECTION_KINDS = {
  users: {
    kind: "user",
    naturalKey: (user) => user.extension,
    changeKey: (user) => user.extension,
    owner: (user) => `user '${user.name}'`,
    label: (user) => `user ${user.extension} (${user.name})`,
  },
  queues: {
    kind: "queue",
    naturalKey: (queue) => queue.number,
    changeKey: (queue) => queue.number,
    owner: (queue) => `queue '${queue.name}'`,
    label: (queue) => `queue ${queue.name} (${queue.number})`,
  },
  ivrs: {
    kind: "ivr",
    naturalKey: (ivr) => ivr.extension,
    changeKey: (ivr) => ivr.extension,
    owner: (ivr) => `IVR '${ivr.name}'`,
    label: (ivr) => `ivr ${ivr.name} (${ivr.extension})`,
  },
  dids: {
    kind: "did",
    // However the number is written, the same DID.
    naturalKey: (did) => internationalDigits(did.number),
    changeKey: (did) => did.number,
    owner: (did) => `DID ${did.number}`,
    label: (did) => `DID ${did.number}`,
  },
  trunks: {
    kind: "trunk",
    naturalKey: (trunk) => trunk.name,
    changeKey: (trunk) => trunk.name,
    owner: (trunk) => `trunk '${trunk.name}'`,
    label: (trunk) => `trunk ${trunk.name}`,
  },
  outbound_routes: {
    kind: "outbound_route",
    naturalKey: (route) => route.name,
    changeKey: (route) => route.name,
    owner: (route) => `outbound route '${route.name}'`,
    label: (route) => `outbound route ${route.name}`,
  },
  time_conditions: {
    kind: "time_condition",
    naturalKey: (tc) => tc.name,
    changeKey: (tc) => tc.name,
    owner: (tc) => `time condition '${tc.name}'`,
    label: (tc) => `time condition ${tc.name}`,
  },
} as const satisfies { [C in CollectionName]: CollectionKind<ItemOf<C>> };

/** The rules of collection `name`, typed for its items. */
export function collectionKind<C extends CollectionName>(name: C): CollectionKind<ItemOf<C>> {
  return COLLECTION_KINDS[name] as CollectionKind<ItemOf<C>>;
}

/** The collection kind (`user`, `did`, ...) apply reports changes of. */
export type CollectionKindName = (typeof COLLECTION_KINDS)[CollectionName]["kind"];

/** Every collection of an org, empty: a new org's stored state. */
export function emptyCollections(): Pick<OrgState, CollectionName> {
  return mapCollections(() => []);
}

/** A path's collection and index (`ivrs[2].options[0]` -> ivrs, 2); undefined when none. */
export function collectionAt(path: string): { name: CollectionName; index: number } | undefined {
  const match = /^([a-z_]+)\[(\d+)\]/.exec(path);
  const name = match?.[1] as CollectionName | undefined;
  if (!match || name === undefined || !(COLLECTION_NAMES as readonly string[]).includes(name)) {
    return undefined;
  }
  return { name, index: Number(match[2]) };
}

type Collections = Pick<OrgState, CollectionName>;

/** Every collection made by `make`, in OrgState order. */
export function mapCollections(
  make: <C extends CollectionName>(name: C) => OrgState[C],
): Collections {
  return Object.fromEntries(COLLECTION_NAMES.map((name) => [name, make(name)])) as Collections;
}

/** Every collection made by `make`, all at once (store reads), in OrgState order. */
export async function mapCollectionsAsync(
  make: <C extends CollectionName>(name: C) => Promise<OrgState[C]>,
): Promise<Collections> {
  const lists = await Promise.all(COLLECTION_NAMES.map((name) => make(name)));
  return Object.fromEntries(COLLECTION_NAMES.map((name, i) => [name, lists[i]])) as Collections;
}
