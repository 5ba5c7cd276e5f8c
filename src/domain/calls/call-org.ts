// Which org a call record or a live channel belongs to: exactly SPEC.md §1 tenant isolation
// rule 3, decided once when the engine reports it. A call matches an org when its accountcode
// equals the org id, or its peeraccount equals the org id, or its channel contains the org's
// context prefix. No other clause exists here: a past defect matched every org's AI-outbound
// calls through a wider one.

export interface OrgMarker {
  id: string;
  context_prefix: string;
}

/** What rule 3 looks at. */
export interface CallOrgEvidence {
  accountcode: string;
  peeraccount: string;
  channel: string;
}

/** The orgs rule 3 can name, indexed for one lookup per event. */
export class OrgDirectory {
  private readonly ids: ReadonlySet<string>;
  // Longest first: when one prefix contains another (`org_a_` in `xorg_a_`), the longer, more
  // specific one wins, whatever order the orgs were listed in.
  private readonly prefixes: readonly OrgMarker[];

  constructor(orgs: readonly OrgMarker[]) {
    this.ids = new Set(orgs.map((org) => org.id));
    this.prefixes = orgs
      .filter((org) => org.context_prefix !== "")
      .sort((a, b) => b.context_prefix.length - a.context_prefix.length);
  }

  /** The org of a call by rule 3 (accountcode, then peeraccount, then prefix in the channel). */
  orgOf(evidence: CallOrgEvidence): string | null {
    if (this.ids.has(evidence.accountcode)) return evidence.accountcode;
    if (this.ids.has(evidence.peeraccount)) return evidence.peeraccount;
    if (evidence.channel === "") return null;
    for (const org of this.prefixes) {
      if (evidence.channel.includes(org.context_prefix)) return org.id;
    }
    return null;
  }

  /**
   * The org whose context prefix an engine object's name starts with (rule 3's prefix part, for
   * names the compiler builds as `<context_prefix><...>`: endpoints and AORs). Longest first.
   */
  ownerOfName(name: string): OrgMarker | null {
    return this.prefixes.find((org) => name.startsWith(org.context_prefix)) ?? null;
  }

  get size(): number {
    return this.ids.size;
  }
}

/** Where a RefreshingOrgDirectory reads the orgs from (the store). */
export interface OrgMarkerSource {
  /** Every org's id and context prefix. */
  list(): Promise<readonly OrgMarker[]>;
  /**
   * A number that changes whenever an org is added. Asked on every miss, so it must be cheap
   * (the store answers `max(rowid)` of its organizations: one index probe).
   */
  generation(): Promise<number>;
}

/**
 * An OrgDirectory kept current from the store: an event that names no known org reloads it when,
 * and only when, an org was added since the last load. So a new org's first call is attributed
 * even when it comes a moment after the last load (a time-throttled reload once dropped such a
 * call's records with no org), while a stream of calls that belong to no org (a carrier's leg)
 * costs one cheap generation read each, never a reload.
 */
export class RefreshingOrgDirectory {
  private directory = new OrgDirectory([]);
  private loadedGeneration: number | null = null;
  private reloading: Promise<void> | null = null;

  constructor(private readonly source: OrgMarkerSource) {}

  /** Loads the orgs now. */
  async refresh(): Promise<void> {
    const generation = await this.source.generation();
    this.directory = new OrgDirectory(await this.source.list());
    this.loadedGeneration = generation;
  }

  /** Rule 3 against the known orgs, reloading them first when nothing matches and an org was added. */
  async orgOf(evidence: CallOrgEvidence): Promise<string | null> {
    const found = this.directory.orgOf(evidence);
    if (found !== null) return found;
    if (!(await this.reloadIfOrgsAdded())) return null;
    return this.directory.orgOf(evidence);
  }

  /**
   * `orgOf` for a batch of events: each from the known orgs, and when any names none, one check
   * for added orgs (and one reload) for the whole batch instead of one per event.
   */
  async orgsOf(evidence: readonly CallOrgEvidence[]): Promise<(string | null)[]> {
    const found = evidence.map((one) => this.directory.orgOf(one));
    if (!found.includes(null) || !(await this.reloadIfOrgsAdded())) return found;
    return evidence.map((one, i) => found[i] ?? this.directory.orgOf(one));
  }

  /**
   * `OrgDirectory.ownerOfName`, reloading the orgs first when none matches and an org was added
   * (the names come from the engine's own configuration, so a miss is usually an org newer than
   * the last load, e.g. a phone registering within a second of its org's first deploy).
   */
  async ownerOfName(name: string): Promise<OrgMarker | null> {
    const found = this.directory.ownerOfName(name);
    if (found !== null) return found;
    if (!(await this.reloadIfOrgsAdded())) return null;
    return this.directory.ownerOfName(name);
  }

  /**
   * Rule 3 against the orgs loaded so far: for synchronous callers (live channels). A miss starts
   * the same check in the background, so an org created after the last load is known to the next
   * caller (a live-call read asks again for channels that had no org).
   */
  orgOfKnown(evidence: CallOrgEvidence): string | null {
    const found = this.directory.orgOf(evidence);
    if (found === null && !this.reloading) {
      this.reloading = this.reloadIfOrgsAdded()
        .then(() => undefined)
        .catch(() => {
          // The next miss tries again; ingest's own reload reports store errors.
        })
        .finally(() => {
          this.reloading = null;
        });
    }
    return found;
  }

  /** Reloads when the store's org generation moved since the last load; true when it did. */
  private async reloadIfOrgsAdded(): Promise<boolean> {
    if ((await this.source.generation()) === this.loadedGeneration) return false;
    await this.refresh();
    return true;
  }
}
