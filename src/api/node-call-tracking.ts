// Call events from every engine node (issue 25, docs/nodes.md): one call tracking per node (its
// own AMI events connection, its own live calls), under the replica rules of the single engine
// (src/api/call-tracking.ts): every replica follows every node for live calls and call control,
// and only the holder of the node's lease `call-ingest:node:<node id>` stores its call records,
// journey steps and registrations, stamped with the node's id. While nodes are defined the API's
// live calls are every node's together, and call control goes to the node that carries the
// channel (an Originate to the org's node): the implicit engine's tracking is left out, since
// the first node usually names that same engine and its calls would count twice.
import type { Logger } from "pino";
import type { Clock } from "../clock.js";
import type { CallControlPort, OriginateRequest } from "../domain/calls/call-control.js";
import type { LiveCall, LiveCallsView } from "../domain/calls/live-calls.js";
import { Unavailable } from "../domain/errors.js";
import { systemNameProblems } from "../domain/nodes/system-names.js";
import type { AmiInstruments, CallIngestInstruments } from "../metrics/instruments.js";
import type { EngineNodeRecord } from "../model/stored-records.js";
import type { Db } from "../store/database.js";
import {
  findPlacement,
  listEngineNodes,
  listNodeSystemNames,
  recordNodeSystemName,
} from "../store/engine-node-repository.js";
import { type CallTracking, startCallTracking } from "./call-tracking.js";

/** The domain's answer when no engine can act on a call (src/domain/calls/call-control.ts). */
const ENGINE_AWAY = "The engine is not connected: live calls cannot be changed now";

/** The lease of a node's call-event ingest. */
export function nodeIngestRole(nodeId: string): string {
  return `call-ingest:node:${nodeId}`;
}

export interface NodeCallTrackingOptions {
  db: Db;
  clock: Clock;
  logger?: Logger;
  roles: {
    add(role: { name: string; start(): void; stop(): Promise<void> }): void;
    remove(name: string): Promise<void>;
  };
  /** The node's AMI secret, unsealed. */
  secretOf: (node: EngineNodeRecord) => string;
  /** The one implicit engine's tracking: what the API sees while no node is defined. */
  implicit: CallTracking;
  /** Whether engine nodes are defined now. */
  nodesDefined: () => boolean;
  instruments?: { calls: CallIngestInstruments; ami: AmiInstruments };
  /** Builds a node's tracking (default: AMI to the node's address); tests feed fake engines. */
  track?: typeof startCallTracking;
}

interface Followed {
  node: EngineNodeRecord;
  tracking: CallTracking;
  role: string;
  /** Whether this replica holds the node's ingest lease (it stores, unless the node is held). */
  leased: boolean;
}

/** Every node's call tracking, and the API's view of live calls and call control over them. */
export class NodeCallTracking {
  private readonly followed = new Map<string, Followed>();
  /** Nodes whose events are not stored, with why (src/domain/nodes/system-names.ts). */
  private problems = new Map<string, string>();
  private judging: Promise<void> = Promise.resolve();
  readonly live: LiveCallsView;
  readonly control: CallControlPort;

  constructor(private readonly options: NodeCallTrackingOptions) {
    const trackings = (): CallTracking[] =>
      options.nodesDefined()
        ? [...this.followed.values()].map((f) => f.tracking)
        : [options.implicit];
    this.live = {
      callsOf: (orgId) =>
        trackings()
          .flatMap((t) => t.live.callsOf(orgId))
          .sort(newestFirst),
      callOf: (orgId, linkedid) => {
        for (const t of trackings()) {
          const call = t.live.callOf(orgId, linkedid);
          if (call) return call;
        }
        return null;
      },
      get tracking() {
        return trackings().some((t) => t.live.tracking);
      },
    };
    const byChannel = (channel: string): CallControlPort => {
      const carrying = trackings().find((t) => t.live.carries(channel)) ?? trackings()[0];
      const control = carrying?.control;
      if (!control) throw new Unavailable(ENGINE_AWAY);
      return control;
    };
    this.control = {
      hangup: (channel) => byChannel(channel).hangup(channel),
      blindTransfer: (channel, context, exten) =>
        byChannel(channel).blindTransfer(channel, context, exten),
      originate: async (request) => (await this.controlOfOrg(request)).originate(request),
      getVariable: (channel, name) => byChannel(channel).getVariable(channel, name),
      setVariable: (channel, name, value) => byChannel(channel).setVariable(channel, name, value),
      redirect: (channel, to, extra) => byChannel(channel).redirect(channel, to, extra),
      bridge: (channel1, channel2) => byChannel(channel1).bridge(channel1, channel2),
    };
  }

  /** The tracking of node `nodeId`, when followed. */
  trackingOf(nodeId: string): CallTracking | undefined {
    return this.followed.get(nodeId)?.tracking;
  }

  /** Calls live now over every node (the implicit engine's without nodes), for /metrics. */
  callCount(): number {
    if (!this.options.nodesDefined()) return this.options.implicit.live.callCount();
    let count = 0;
    for (const f of this.followed.values()) count += f.tracking.live.callCount();
    return count;
  }

  /** Starts following a node's events; its ingest starts when this replica takes its lease. */
  follow(node: EngineNodeRecord): void {
    if (this.followed.has(node.id)) return;
    const track = this.options.track ?? startCallTracking;
    const tracking = track({
      db: this.options.db,
      clock: this.options.clock,
      ...(this.options.logger ? { logger: this.options.logger.child({ node: node.name }) } : {}),
      ami: {
        host: node.ami_host,
        port: node.ami_port,
        username: node.ami_username,
        secret: this.options.secretOf(node),
      },
      standby: true,
      nodeId: node.id,
      ...(this.options.instruments ? { instruments: this.options.instruments } : {}),
    });
    const role = nodeIngestRole(node.id);
    const followed: Followed = { node, tracking, role, leased: false };
    this.followed.set(node.id, followed);
    this.options.roles.add({
      name: role,
      start: () => {
        followed.leased = true;
        if (!this.problems.has(node.id)) tracking.takeOverIngest();
      },
      stop: () => {
        followed.leased = false;
        return tracking.standByIngest();
      },
    });
    // Each connect (a restarted Asterisk may have another systemname): ask, record, judge.
    tracking.connection?.onLogin(() => void this.readSystemName(followed));
    void this.judge();
  }

  /** Why node `nodeId`'s events are not stored, or null. */
  problemOf(nodeId: string): string | null {
    return this.problems.get(nodeId) ?? null;
  }

  /** Records the systemname node `followed`'s Asterisk answers (`CoreSettings`), then judges. */
  private async readSystemName(followed: Followed): Promise<void> {
    const connection = followed.tracking.connection;
    if (!connection || this.followed.get(followed.node.id) !== followed) return;
    try {
      const answer = await connection.action({ Action: "CoreSettings" });
      // asterisk-manager gives the headers lower-cased.
      const systemName = answer.systemname;
      if (typeof systemName !== "string") {
        throw new Error(`CoreSettings answered no SystemName (${String(answer.message ?? "")})`);
      }
      await recordNodeSystemName(
        this.options.db,
        followed.node.id,
        systemName.trim(),
        this.options.clock().toISOString(),
      );
      await this.judge();
    } catch (error) {
      this.options.logger?.warn(
        { node: followed.node.name, err: (error as Error).message },
        "reading the node's systemname failed",
      );
    }
  }

  /**
   * Judges every node's last-seen systemname and holds back (or resumes) the ingest of the nodes
   * followed here: a node with none among several, or sharing one, hands out call ids that
   * collide with another node's, and storing its events would drop or merge calls. Its events
   * are still followed for live calls and call control; a standby keeps its short window, so a
   * node fixed and reconnected resumes where the ingest stands.
   */
  private judge(): Promise<void> {
    this.judging = this.judging.then(async () => {
      try {
        const seen = await listNodeSystemNames(this.options.db);
        const nodes = await listEngineNodes(this.options.db);
        const problems = systemNameProblems(
          nodes.map((node) => ({
            id: node.id,
            name: node.name,
            systemName: seen.get(node.id) ?? null,
          })),
        );
        for (const followed of this.followed.values()) {
          const id = followed.node.id;
          const was = this.problems.get(id);
          const now = problems.get(id);
          if (now && !was) {
            this.options.logger?.error({ node: followed.node.name, problem: now }, "node held");
            if (followed.leased) await followed.tracking.standByIngest();
          } else if (!now && was) {
            this.options.logger?.info({ node: followed.node.name }, "node's systemname fixed");
            // What arrived while held carries colliding ids: dropped, never replayed.
            followed.tracking.discardKept();
            if (followed.leased) followed.tracking.takeOverIngest();
          }
        }
        this.problems = problems;
      } catch (error) {
        this.options.logger?.error({ err: error }, "judging the nodes' systemnames failed");
      }
    });
    return this.judging;
  }

  /** Stops following a node (removed, down or changed): its lease is given up first. */
  async unfollow(nodeId: string): Promise<void> {
    const followed = this.followed.get(nodeId);
    if (!followed) return;
    this.followed.delete(nodeId);
    await this.options.roles.remove(followed.role);
    await followed.tracking.stop();
    // One node fewer: a node with no systemname may be alone now, a duplicate unique.
    await this.judge();
  }

  /** Resolves once every node's received events are stored. */
  async idle(): Promise<void> {
    await Promise.all([...this.followed.values()].map((f) => f.tracking.idle()));
  }

  /** Stops every node's tracking (after the roles stopped). */
  async stop(): Promise<void> {
    for (const id of [...this.followed.keys()]) {
      const followed = this.followed.get(id)!;
      this.followed.delete(id);
      await followed.tracking.stop();
    }
  }

  private async controlOfOrg(request: OriginateRequest): Promise<CallControlPort> {
    if (this.options.nodesDefined()) {
      const placement = await findPlacement(this.options.db, request.account);
      const control = placement ? this.followed.get(placement.node_id)?.tracking.control : null;
      if (control) return control;
      throw new Unavailable(ENGINE_AWAY);
    }
    const control = this.options.implicit.control;
    if (!control) throw new Unavailable(ENGINE_AWAY);
    return control;
  }
}

function newestFirst(a: LiveCall, b: LiveCall): number {
  return b.since.getTime() - a.since.getTime();
}
