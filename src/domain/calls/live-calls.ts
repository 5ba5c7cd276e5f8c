// The engine's channels now, from its channel events and replaced wholesale by a
// `CoreShowChannels` list after every (re)connect, each channel with its org by SPEC.md §1
// rule 3 (re-derived on every change: an inbound channel gets its org's accountcode only once
// the DID's dialplan runs). Kept in memory: a restart rebuilds it from the engine.

import type { Clock } from "../../clock.js";
import type { ChannelSnapshot } from "../../engine/call-events.js";
import type { CallOrgEvidence } from "./call-org.js";

export interface LiveChannel extends ChannelSnapshot {
  orgId: string | null;
  /** When pbxctl learned of the channel (or, after a resync, when the engine says it began). */
  since: Date;
}

/** One live call of an org: the org's channels that share a linkedid. */
export interface LiveCall {
  linkedid: string;
  since: Date;
  channels: LiveChannel[];
}

export interface LiveCallsView {
  /** The org's live calls, newest first. */
  callsOf(orgId: string): LiveCall[];
  /** The org's live call with this linkedid, or null. */
  callOf(orgId: string, linkedid: string): LiveCall | null;
  /** False while no engine feeds it (PBX_ENGINE none, or AMI not connected yet). */
  readonly tracking: boolean;
}

/** A channel in a resync list, with how long it has been up (CoreShowChannel `Duration`). */
export interface ListedChannel extends ChannelSnapshot {
  upSeconds: number;
}

export class LiveCalls implements LiveCallsView {
  private readonly channels = new Map<string, LiveChannel>();
  tracking = false;

  constructor(
    private readonly orgOf: (evidence: CallOrgEvidence) => string | null,
    private readonly clock: Clock,
  ) {}

  /** Whether the engine has a channel of this name up now (which node to act on, issue 25). */
  carries(channel: string): boolean {
    for (const live of this.channels.values()) if (live.channel === channel) return true;
    return false;
  }

  /** How many calls (linkedids) are live on the engine now, whatever their org (for /metrics). */
  callCount(): number {
    const calls = new Set<string>();
    for (const channel of this.channels.values()) calls.add(channel.linkedid);
    return calls.size;
  }

  /**
   * Applies one channel event: `newchannel` adds the channel, `hangup` removes it, any other
   * event updates a channel already known (events that trail a hangup never bring it back).
   */
  channelEvent(event: string, snapshot: ChannelSnapshot): void {
    const known = this.channels.get(snapshot.uniqueid);
    if (event === "hangup") {
      this.channels.delete(snapshot.uniqueid);
      return;
    }
    if (!known && event !== "newchannel") return;
    this.channels.set(snapshot.uniqueid, this.withOrg(snapshot, known?.since ?? this.clock()));
  }

  /** Replaces every channel with the engine's own list (after a (re)connect). */
  resync(listed: readonly ListedChannel[]): void {
    const now = this.clock().getTime();
    this.channels.clear();
    for (const channel of listed) {
      const { upSeconds, ...snapshot } = channel;
      this.channels.set(
        snapshot.uniqueid,
        this.withOrg(snapshot, new Date(now - upSeconds * 1000)),
      );
    }
    this.tracking = true;
  }

  /** The engine is gone: nothing is known to be live. */
  lost(): void {
    this.channels.clear();
    this.tracking = false;
  }

  callsOf(orgId: string): LiveCall[] {
    const calls = new Map<string, LiveCall>();
    for (const [uniqueid, stored] of this.channels) {
      // A channel of an org created after the directory was loaded had no org when its events
      // came; ask again now (the directory refreshes on a miss), rather than hide it for good.
      const channel = stored.orgId === null ? this.withOrg(stored, stored.since) : stored;
      if (channel !== stored && channel.orgId !== null) this.channels.set(uniqueid, channel);
      if (channel.orgId !== orgId) continue;
      const call = calls.get(channel.linkedid);
      if (call) {
        call.channels.push(channel);
        if (channel.since < call.since) call.since = channel.since;
      } else {
        calls.set(channel.linkedid, {
          linkedid: channel.linkedid,
          since: channel.since,
          channels: [channel],
        });
      }
    }
    for (const call of calls.values()) {
      call.channels.sort((a, b) => a.since.getTime() - b.since.getTime());
    }
    return [...calls.values()].sort(
      (a, b) => b.since.getTime() - a.since.getTime() || (a.linkedid < b.linkedid ? 1 : -1),
    );
  }

  callOf(orgId: string, linkedid: string): LiveCall | null {
    return this.callsOf(orgId).find((call) => call.linkedid === linkedid) ?? null;
  }

  private withOrg(snapshot: ChannelSnapshot, since: Date): LiveChannel {
    const orgId = this.orgOf({
      accountcode: snapshot.accountcode,
      peeraccount: "",
      channel: snapshot.channel,
    });
    return { ...snapshot, orgId, since };
  }
}

/** No engine events: nothing live, and `tracking` says so. */
export const noLiveCalls: LiveCallsView = {
  callsOf: () => [],
  callOf: () => null,
  tracking: false,
};
