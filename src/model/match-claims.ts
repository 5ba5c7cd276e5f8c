// The trunk addresses earlier org files claimed, asked "which claim does this entry overlap
// first?" without comparing it with every claim: comparing each org's entries with every earlier
// org's made the checks across 10,000 files quadratic (minutes for `validate`). Every entry is a
// CIDR block or a host name (trunk-identify.ts), and two CIDR blocks overlap exactly when one
// holds the other, so the earlier claims an entry overlaps are the blocks that hold it (one
// lookup per shorter prefix length) and the blocks inside it (one lookup: each claim is recorded
// at every block that holds it). A host name overlaps only the same name. The answer is the
// earliest such claim, as a scan of the claims in order would find.
import type { Trunk } from "./org-state.js";
import { identifyMatches, matchRange, type Range } from "./trunk-identify.js";

interface Claim<T> {
  order: number;
  owner: T;
}

export class MatchClaims<T> {
  private count = 0;
  /** Host names (lower case) -> the first claim of each. */
  private readonly names = new Map<string, Claim<T>>();
  /** Blocks (blockKey) -> the first claim of exactly that block. */
  private readonly blocks = new Map<BlockKey, Claim<T>>();
  /** Blocks (blockKey) -> the first claim of that block or of one inside it. */
  private readonly within = new Map<BlockKey, Claim<T>>();
  /** The prefix lengths of the blocks claimed, by family (few: the holders to look up). */
  private readonly lengths = { 4: new Set<number>(), 6: new Set<number>() };
  /** Each entry's block, parsed once: an entry is looked up, then added. */
  private readonly blocksOf = new Map<string, Block | null>();

  private blockOf(entry: string): Block | null {
    let block = this.blocksOf.get(entry);
    if (block === undefined) {
      block = ipv4Block(entry);
      if (block === null) {
        const range = matchRange(entry);
        block = range && { family: range.family, prefix: range.prefix, keyAt: blockKeys(range) };
      }
      this.blocksOf.set(entry, block);
    }
    return block;
  }

  /** Records `entry` (a trunk's identify match) as claimed by `owner`. */
  add(entry: string, owner: T): void {
    const claim = { order: this.count++, owner };
    const range = this.blockOf(entry);
    if (range === null) {
      setFirst(this.names, entry.toLowerCase(), claim);
      return;
    }
    const { keyAt } = range;
    setFirst(this.blocks, keyAt(range.prefix), claim);
    this.lengths[range.family].add(range.prefix);
    // Every block holding one already recorded holds an earlier claim: stop at the first.
    for (let prefix = range.prefix; prefix >= 0; prefix--) {
      const key = keyAt(prefix);
      if (this.within.has(key)) break;
      this.within.set(key, claim);
    }
  }

  /** The owner of the earliest claim that `entry` overlaps, if any. */
  firstOverlapping(entry: string): T | undefined {
    const range = this.blockOf(entry);
    if (range === null) return this.names.get(entry.toLowerCase())?.owner;
    const { keyAt } = range;
    let first = this.within.get(keyAt(range.prefix));
    for (const prefix of this.lengths[range.family]) {
      if (prefix >= range.prefix) continue;
      const holder = this.blocks.get(keyAt(prefix));
      if (holder !== undefined && (first === undefined || holder.order < first.order)) {
        first = holder;
      }
    }
    return first?.owner;
  }
}

type IdentifyingTrunk = Pick<Trunk, "host" | "registration" | "match">;

/** Other orgs' trunks' identify matches, indexed once for every trunk checked against them. */
export function trunkClaims(trunks: readonly IdentifyingTrunk[]): MatchClaims<string> {
  const claims = new MatchClaims<string>();
  for (const trunk of trunks) {
    for (const entry of identifyMatches(trunk)) claims.add(entry, entry);
  }
  return claims;
}

/** The first of `trunk`'s identify matches that one of the `claims` (other orgs') overlaps. */
export function claimedElsewhere(
  trunk: IdentifyingTrunk,
  claims: MatchClaims<string>,
): string | undefined {
  return identifyMatches(trunk).find((entry) => claims.firstOverlapping(entry) !== undefined);
}

/** An IPv4 block as a number (most keys, and cheap), an IPv6 block as a string. */
type BlockKey = number | string;

/** A claimed block: its family, prefix length and the keys of the blocks that hold it. */
interface Block {
  family: 4 | 6;
  prefix: number;
  keyAt: (prefix: number) => BlockKey;
}

const IPV4_BLOCK = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})(?:\/(\d{1,2}))?$/;

/**
 * The block of a plain IPv4 address or CIDR block (most trunk entries) without matchRange's
 * BigInts: the same block matchRange gives; null for any other form (matchRange decides).
 */
function ipv4Block(entry: string): Block | null {
  const parts = IPV4_BLOCK.exec(entry);
  if (!parts) return null;
  let address = 0;
  for (let k = 1; k <= 4; k++) {
    const octet = Number(parts[k]);
    if (octet > 255) return null;
    address = address * 256 + octet;
  }
  const prefix = parts[5] === undefined ? 32 : Number(parts[5]);
  if (prefix > 32) return null;
  // prefix * 2^32 + the block's network bits: unique below 2^38, exact in a double.
  return {
    family: 4,
    prefix,
    keyAt: (holder) => holder * 2 ** 32 + Math.floor(address / 2 ** (32 - holder)),
  };
}

/** The keys of the blocks that hold a range's first address, by prefix length. */
function blockKeys(range: Range): (prefix: number) => BlockKey {
  if (range.family === 4) {
    const address = Number(range.first);
    // prefix * 2^32 + the block's network bits: unique below 2^38, exact in a double.
    return (prefix) => prefix * 2 ** 32 + Math.floor(address / 2 ** (32 - prefix));
  }
  return (prefix) => `${prefix}/${(range.first >> BigInt(128 - prefix)).toString(36)}`;
}

function setFirst<K, T>(map: Map<K, Claim<T>>, key: K, claim: Claim<T>): void {
  if (!map.has(key)) map.set(key, claim);
}
