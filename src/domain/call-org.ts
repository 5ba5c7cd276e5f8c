// Which org a call record or a live channel belongs to: exactly SPEC.md §1 tenant isolation
// rule 3, decided once when the engine reports it. A call matches an org when its accountcode
// equals the org id, or its peeraccount equals the org id, or its channel contains the org's
// context prefix. No other clause exists here: a past defect matched every org's AI-outbound
// calls through a wider one.
import type { Clock } from "../clock.js";

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

/**
 * An OrgDirectory kept current from a loader (the store's orgs): reloaded when an event names
 * nothing it knows — a new org's first call — at most once per `minReloadMs`, so a stream of
 * calls that belong to no org (a carrier's leg) cannot turn into a query per event.
 */
export class RefreshingOrgDirectory {
  private directory = new OrgDirectory([]);
  private loadedAt = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly load: () => Promise<readonly OrgMarker[]>,
    private readonly clock: Clock,
    private readonly minReloadMs = 1000,
  ) {}

  /** Loads the orgs now. */
  async refresh(): Promise<void> {
    this.loadedAt = this.clock().getTime();
    this.directory = new OrgDirectory(await this.load());
  }

  /** Rule 3 against the known orgs, reloading them first when nothing matches and it is time. */
  async orgOf(evidence: CallOrgEvidence): Promise<string | null> {
    const found = this.directory.orgOf(evidence);
    if (found !== null) return found;
    if (this.clock().getTime() - this.loadedAt < this.minReloadMs) return null;
    await this.refresh();
    return this.directory.orgOf(evidence);
  }

  /**
   * `OrgDirectory.ownerOfName`, reloading the orgs first whenever none matches. Not throttled like
   * `orgOf`: the names come from the engine's own configuration (AORs the compiler generated, so
   * a miss means an org newer than the last load, e.g. a phone registering within a second of
   * its org's first deploy) and they change only when a phone registers or leaves.
   */
  async ownerOfName(name: string): Promise<OrgMarker | null> {
    const found = this.directory.ownerOfName(name);
    if (found !== null) return found;
    await this.refresh();
    return this.directory.ownerOfName(name);
  }

  /**
   * Rule 3 against the orgs loaded so far: for synchronous callers (live channels). A miss starts
   * a reload in the background when one is due, so an org created after the last load is known
   * to the next caller (a live-call read asks again for channels that had no org).
   */
  orgOfKnown(evidence: CallOrgEvidence): string | null {
    const found = this.directory.orgOf(evidence);
    if (found === null) this.reloadInBackground();
    return found;
  }

  private reloading: Promise<void> | null = null;

  private reloadInBackground(): void {
    if (this.reloading) return;
    if (this.clock().getTime() - this.loadedAt < this.minReloadMs) return;
    this.reloading = this.refresh()
      .catch(() => {
        // The next miss tries again; ingest's own reload reports store errors.
      })
      .finally(() => {
        this.reloading = null;
      });
  }
}
