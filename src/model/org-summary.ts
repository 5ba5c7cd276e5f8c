// What the checks that span org files need of one org, small enough to cache beside the files
// and to hold for 10,000 orgs at once: its id, context prefix and slug, its usable DIDs, its
// trunks' match addresses and its gateway entry, each with where it is written. The checks run
// over these summaries, so a file that did not change is never parsed again to check the others.
import { nestingPartners, PREFIX_NESTING_RULE } from "./context-prefix-nesting.js";
import { gatewayOrgOf } from "./gateway.js";
import { MatchClaims } from "./match-claims.js";
import type { GatewayOrg, OrgState } from "./org-state.js";
import { internationalDigits } from "./phone.js";
import { isUsableDid } from "./refs.js";
import { identifyMatches } from "./trunk-identify.js";
import type { SourceDiagnostic, SourcePosition } from "./yaml.js";

/** One org's claims on what orgs deployed together share, each placed in its file. */
export interface OrgSummary {
  id: string;
  context_prefix: string;
  slug: string | null;
  /** The assigned, active DIDs (`key`: international digits): no two org files may both hold one. */
  dids: (SummaryClaim & { key: string })[];
  /**
   * The addresses and ranges each trunk is identified by (its `match` entries and, where it
   * identifies the trunk, its host: trunk-identify.ts): no two org files may overlap.
   */
  trunk_matches: SummaryClaim[];
  /** What the gateway dispatches to this org (null: nothing). */
  gateway: GatewayOrg | null;
  /** Where `org.id`, `org.context_prefix` and `org.slug` are written. */
  at: { id: SourcePosition; context_prefix: SourcePosition; slug: SourcePosition };
}

/** A value an org claims, the path it is written at and where that is. */
export interface SummaryClaim {
  path: string;
  value: string;
  at: SourcePosition;
}

/**
 * What the checks across files compare of a summary, without the places and paths they report:
 * id, context prefix, slug, the DIDs' keys and the trunk match values (in the summary's order).
 * A cached file is checked by these alone; its whole summary is read only to report a clash.
 */
export interface SummaryKeys {
  id: string;
  context_prefix: string;
  slug: string | null;
  dids: string[];
  trunk_matches: string[];
}

/**
 * A summary and the file it was read from (as the file is reported). With `keys`, `summary` may
 * be a getter that reads the whole summary only when asked (a cached file: org-file-cache.ts).
 */
export interface SummarizedFile {
  file: string;
  summary: OrgSummary;
  keys?: SummaryKeys;
}

/** The keys of a summary. */
export function summaryKeys(summary: OrgSummary): SummaryKeys {
  return {
    id: summary.id,
    context_prefix: summary.context_prefix,
    slug: summary.slug,
    dids: summary.dids.map((did) => did.key),
    trunk_matches: summary.trunk_matches.map((match) => match.value),
  };
}

/** The keys of a summarized file (its own, or read from its summary). */
export function keysOf(file: SummarizedFile): SummaryKeys {
  return file.keys ?? summaryKeys(file.summary);
}

/** The same summary reported under another name, still read only when asked. */
export function renamed(file: SummarizedFile, name: string): SummarizedFile {
  return {
    file: name,
    get keys() {
      return keysOf(file);
    },
    get summary() {
      return file.summary;
    },
  };
}

/** The summary of a loaded org; `positionOf` places a model path in its file. */
export function summarizeOrg(
  state: OrgState,
  positionOf: (path: string) => SourcePosition,
): OrgSummary {
  const claim = (path: string, value: string): SummaryClaim => ({
    path,
    value,
    at: positionOf(path),
  });
  const dids: OrgSummary["dids"] = [];
  state.dids.forEach((did, k) => {
    if (!isUsableDid(did)) return;
    dids.push({ ...claim(`dids[${k}].number`, did.number), key: internationalDigits(did.number) });
  });
  const trunkMatches: SummaryClaim[] = [];
  state.trunks.forEach((trunk, t) => {
    for (const entry of identifyMatches(trunk)) {
      const m = trunk.match.indexOf(entry);
      trunkMatches.push(claim(m < 0 ? `trunks[${t}].host` : `trunks[${t}].match[${m}]`, entry));
    }
  });
  return {
    id: state.org.id,
    context_prefix: state.org.context_prefix,
    slug: state.org.slug ?? null,
    dids,
    trunk_matches: trunkMatches,
    gateway: gatewayOrgOf(state),
    at: {
      id: positionOf("org.id"),
      context_prefix: positionOf("org.context_prefix"),
      slug: positionOf("org.slug"),
    },
  };
}

/**
 * Who claimed a value before the file being checked (the earliest such file, as reported), by
 * the kind of claim: `crossOrgProblems` answers from maps of the files checked so far, the CLI's
 * claims index (src/cli/lib/claims-index.ts) from a persistent index a change updates.
 */
export interface EarlierClaims {
  id(id: string): string | undefined;
  contextPrefix(prefix: string): string | undefined;
  /**
   * The earliest file whose context prefix nests with `prefix` without equalling it (one begins
   * the other: context-prefix-nesting.ts), with that prefix.
   */
  nestingPrefix(prefix: string): { file: string; prefix: string } | undefined;
  slug(slug: string): string | undefined;
  did(key: string): string | undefined;
  /** The earliest file with a trunk match entry overlapping `value` (match-claims.ts). */
  trunkMatch(value: string): string | undefined;
}

/**
 * Orgs compiled together share one engine: ids, context prefixes, slugs, DIDs and trunk
 * addresses must not collide, and no context prefix may begin another's. One pass with maps of
 * what earlier files claimed (comparing every pair of orgs took seconds at 1,000 orgs), and one
 * sorted walk for nesting prefixes; the later file in the given order gets the problem.
 */
export function crossOrgProblems(files: readonly SummarizedFile[]): SourceDiagnostic[] {
  const problems: SourceDiagnostic[] = [];
  const ids = new Map<string, string>();
  const prefixes = new Map<string, string>();
  const slugs = new Map<string, string>();
  const numbers = new Map<string, string>();
  const addresses = new MatchClaims<string>();
  // Nesting prefixes, for every file at once (sorted: nestingPartners); a file is told of the
  // earliest other that comes before it.
  const filePrefixes = files.map((summarized) => keysOf(summarized).context_prefix);
  const nesting = nestingPartners(filePrefixes);
  let at = 0;
  const earlier: EarlierClaims = {
    id: (id) => ids.get(id),
    contextPrefix: (prefix) => prefixes.get(prefix),
    nestingPrefix: () => {
      const other = nesting[at]!;
      return other >= 0 && other < at
        ? { file: files[other]!.file, prefix: filePrefixes[other]! }
        : undefined;
    },
    slug: (slug) => slugs.get(slug),
    did: (key) => numbers.get(key),
    trunkMatch: (value) => addresses.firstOverlapping(value),
  };
  for (; at < files.length; at++) {
    const summarized = files[at]!;
    const { file } = summarized;
    const keys = keysOf(summarized);
    problems.push(...claimProblems(summarized, earlier));
    // Claims are recorded after the org's own checks: a number twice in one file is the
    // single-org validator's concern, not a clash between files.
    if (!ids.has(keys.id)) ids.set(keys.id, file);
    if (!prefixes.has(keys.context_prefix)) prefixes.set(keys.context_prefix, file);
    if (keys.slug !== null && !slugs.has(keys.slug)) slugs.set(keys.slug, file);
    for (const key of keys.dids) if (!numbers.has(key)) numbers.set(key, file);
    for (const value of keys.trunk_matches) addresses.add(value, file);
  }
  return problems;
}

/**
 * One file's clashes with the files before it (`earlier`), in the order every run reports them:
 * id, context prefix (the same, else one nesting with it), slug, DIDs, trunk match entries.
 * Compared by the file's keys; its summary (the places) is read only for a clash.
 */
export function claimProblems(
  summarized: SummarizedFile,
  earlier: EarlierClaims,
): SourceDiagnostic[] {
  const problems: SourceDiagnostic[] = [];
  const { file } = summarized;
  const error = (path: string, at: SourcePosition, message: string) =>
    problems.push({ severity: "error", path, message, file, ...at });
  const keys = keysOf(summarized);
  const idOwner = earlier.id(keys.id);
  if (idOwner !== undefined) {
    error("org.id", summarized.summary.at.id, `org id ${keys.id} is also used in ${idOwner}`);
  }
  const prefixOwner = earlier.contextPrefix(keys.context_prefix);
  if (prefixOwner !== undefined) {
    error(
      "org.context_prefix",
      summarized.summary.at.context_prefix,
      `context prefix ${keys.context_prefix} is also used in ${prefixOwner}`,
    );
  } else {
    // One prefix beginning another's: the same refusal as the store's (a 409 at apply).
    const nests = earlier.nestingPrefix(keys.context_prefix);
    if (nests !== undefined) {
      error(
        "org.context_prefix",
        summarized.summary.at.context_prefix,
        `context prefix ${keys.context_prefix} overlaps ${nests.prefix} in ${nests.file}: ${PREFIX_NESTING_RULE}`,
      );
    }
  }
  const slugOwner = keys.slug === null ? undefined : earlier.slug(keys.slug);
  if (slugOwner !== undefined) {
    error("org.slug", summarized.summary.at.slug, `slug ${keys.slug} is also used in ${slugOwner}`);
  }
  keys.dids.forEach((key, k) => {
    const numberOwner = earlier.did(key);
    if (numberOwner !== undefined) {
      const did = summarized.summary.dids[k]!;
      error(did.path, did.at, `DID ${did.value} is also assigned in ${numberOwner}`);
    }
  });
  // A carrier address or range another file's trunk matches: Asterisk would give its traffic
  // to one of the two orgs (trunk-identify.ts); the earliest file's claim is named.
  keys.trunk_matches.forEach((value, m) => {
    const owner = earlier.trunkMatch(value);
    if (owner !== undefined) {
      const match = summarized.summary.trunk_matches[m]!;
      error(match.path, match.at, `${value} is already matched by a trunk in ${owner}`);
    }
  });
  return problems;
}
