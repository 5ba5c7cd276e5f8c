// Carries out `org move` (issue 25, docs/nodes.md "Moving an org"): the holder of the
// `org-moves` lease drives every unfinished move of the store, phase by phase, each phase
// recorded before the next starts, so a replica that dies mid-move leaves the move to the next
// holder of the lease, which resumes at the recorded phase (every step may run twice):
//
//   deploying       the target holds the org (`holdsOrg`): its deploy there is made and verified
//   switching       the placement says target (and records the edge's request, same transaction)
//   re-registering  with an edge: once the edge took the switch, the source sends each registered
//                   phone of the org a NOTIFY `Event: check-sync`; the phone re-registers, through
//                   the edge, at the target. Without an edge: nothing to send (re-provisioning)
//   draining        until the source carries no call of the org, or the drain timeout passed
//                   (then the move goes on: the timeout is the admin's bound, reported)
//   removing        the source no longer holds the org: its deploy there removes the files
//   done
//
// The source keeps the org's config until `removing`, so no call in progress loses it. A step
// that fails is recorded (`last_error`) and retried after `retryMs`. Waits go through the Timers
// port and the drain's deadline through the Clock port: tests drive both.
import type { Logger } from "pino";
import { type Clock, systemTimers, type TimerHandle, type Timers } from "../../clock.js";
import type { OrgMoveRecord } from "../../model/stored-records.js";
import type { Db } from "../../store/database.js";
import { edgeRequestOf, NODES_SCOPE } from "../../store/edge-sync-repository.js";
import {
  findPlacement,
  lockNodesForPlacement,
  savePlacement,
} from "../../store/engine-node-repository.js";
import {
  findOrgMove,
  listUnfinishedMoves,
  updateOrgMove,
} from "../../store/org-move-repository.js";
import { createOrganizationRepository } from "../../store/organization-repository.js";
import { registeredAors } from "../../store/sip-contact-repository.js";
import { drainDeadline, nodeName } from "./org-moves.js";

/** The lease whose holder drives the moves. */
export const ORG_MOVES_ROLE = "org-moves";
/** How often a waiting move looks again (edge applied? calls ended?), and new moves are found. */
export const MOVE_POLL_MS = 1000;
/** How long a failed step waits before it is tried again. */
export const MOVE_RETRY_MS = 5000;

/** What a move needs of the engines (wired in `serve`; fakes in tests). */
export interface MoveEngines {
  /**
   * Deploys what the node is to hold of the org now, and its gateway, verified; false when
   * nothing can be sent to the node (down or gone). Throws when the deploy failed.
   */
  deployOn(nodeId: string, orgId: string): Promise<boolean>;
  /**
   * The org's calls up on the node now; 0 for a node whose engine is not followed (down or gone:
   * its calls ended with it); null while its events connection is down (not known).
   */
  callsOn(nodeId: string, orgId: string): number | null;
  /** Sends each endpoint a NOTIFY `Event: check-sync` from the node; how many were sent. */
  notifyReregister(nodeId: string, endpoints: readonly string[]): Promise<number>;
  /** Whether a SIP edge routes the phones (PBX_EDGE_DIR). */
  readonly edge: boolean;
}

export interface OrgMoveDriverOptions {
  db: Db;
  clock: Clock;
  timers?: Timers;
  engines: MoveEngines;
  pollMs?: number;
  retryMs?: number;
  logger?: Pick<Logger, "info" | "error">;
}

/** The moves this replica drives while it holds the `org-moves` lease. */
export class OrgMoveDriver {
  private readonly timers: Timers;
  private readonly pollMs: number;
  private readonly retryMs: number;
  private running = false;
  /** The moves being driven, by org id. */
  private readonly driving = new Map<string, Promise<void>>();
  private readonly sleeping = new Set<{ handle: TimerHandle; wake: () => void }>();
  private scanning: Promise<void> | null = null;

  constructor(private readonly options: OrgMoveDriverOptions) {
    this.timers = options.timers ?? systemTimers;
    this.pollMs = options.pollMs ?? MOVE_POLL_MS;
    this.retryMs = options.retryMs ?? MOVE_RETRY_MS;
  }

  /** Took the lease: drives every unfinished move, and looks for new ones every `pollMs`. */
  start(): void {
    this.running = true;
    this.scanning = this.scan();
  }

  /** Lost the lease (or stopping): each move stops after its current step; resolves then. */
  async stop(): Promise<void> {
    this.running = false;
    for (const sleeper of [...this.sleeping]) {
      sleeper.handle.cancel();
      sleeper.wake();
    }
    await this.scanning;
    await Promise.all(this.driving.values());
  }

  /** The moves being driven now (org ids), for tests and status. */
  get active(): string[] {
    return [...this.driving.keys()];
  }

  private async scan(): Promise<void> {
    while (this.running) {
      try {
        for (const move of await listUnfinishedMoves(this.options.db)) {
          if (!this.running || this.driving.has(move.org_id)) continue;
          const run = this.drive(move.org_id).finally(() => this.driving.delete(move.org_id));
          this.driving.set(move.org_id, run);
        }
      } catch (error) {
        this.options.logger?.error({ err: error }, "reading org moves failed");
      }
      await this.sleep(this.pollMs);
    }
  }

  private sleep(ms: number): Promise<void> {
    if (!this.running) return Promise.resolve();
    return new Promise((resolve) => {
      const sleeper = {
        handle: this.timers.setTimer(ms, () => {
          this.sleeping.delete(sleeper);
          resolve();
        }),
        wake: resolve,
      };
      this.sleeping.add(sleeper);
    });
  }

  private async drive(orgId: string): Promise<void> {
    while (this.running) {
      const move = await findOrgMove(this.options.db, orgId).catch(() => undefined);
      if (!move || move.finished_at !== null) return;
      try {
        const progressed = await this.advance(move);
        if (!progressed) await this.sleep(this.pollMs);
      } catch (error) {
        const message = error instanceof Error ? error.message : String(error);
        this.options.logger?.error({ org_id: orgId, phase: move.phase, err: message }, "org move");
        await updateOrgMove(this.options.db, move.id, {
          last_error: message,
          updated_at: this.now(),
        }).catch(() => {});
        await this.sleep(this.retryMs);
      }
    }
  }

  private now(): string {
    return this.options.clock().toISOString();
  }

  /** Moves `move` on by one phase; false when it has to wait (looked at again after `pollMs`). */
  private async advance(move: OrgMoveRecord): Promise<boolean> {
    const { db, engines } = this.options;
    const next = async (change: Partial<OrgMoveRecord>) => {
      await updateOrgMove(db, move.id, { ...change, last_error: null, updated_at: this.now() });
      this.options.logger?.info(
        { org_id: move.org_id, move_id: move.id, phase: change.phase ?? move.phase },
        "org move",
      );
      return true;
    };
    if (!(await createOrganizationRepository(db).findById(move.org_id))) {
      // Deleted meanwhile: its files went with the deletion's deploys; nothing is left to move.
      return next({ phase: "done", finished_at: this.now(), last_error: "organization deleted" });
    }
    switch (move.phase) {
      case "deploying": {
        if (!(await engines.deployOn(move.target_node_id, move.org_id))) {
          throw new Error(`engine node '${await nodeName(db, move.target_node_id)}' is down`);
        }
        return next({ phase: "switching" });
      }
      case "switching": {
        const edgeSeq = await db.transaction().execute(async (trx) => {
          await lockNodesForPlacement(trx);
          const placement = await findPlacement(trx, move.org_id);
          if (placement && placement.node_id !== move.target_node_id) {
            // A move to the org's standby leaves it without one (an admin pins a new one).
            const standby = placement.standby_node_id;
            await savePlacement(trx, {
              org_id: move.org_id,
              node_id: move.target_node_id,
              standby_node_id: standby === move.target_node_id ? null : standby,
              pinned: 1,
              placed_at: this.now(),
            });
          }
          return (await edgeRequestOf(trx, NODES_SCOPE)).seq;
        });
        return next({ phase: "re-registering", edge_seq: edgeSeq });
      }
      case "re-registering": {
        let notified: number | null = null;
        if (engines.edge) {
          // The phones are told only once the edge routes the org to the target.
          const edge = await edgeRequestOf(db, NODES_SCOPE);
          if (edge.done < (move.edge_seq ?? 0)) return false;
          const phones = await registeredAors(db, move.org_id);
          notified = await engines.notifyReregister(move.source_node_id, phones);
        }
        return next({
          phase: "draining",
          phones_notified: notified,
          drain_started_at: move.drain_started_at ?? this.now(),
        });
      }
      case "draining": {
        const startedAt = move.drain_started_at ?? this.now();
        const calls = engines.callsOn(move.source_node_id, move.org_id);
        if (calls === 0) return next({ phase: "removing", drain_calls: 0 });
        if (this.options.clock().getTime() >= Date.parse(drainDeadline(move, startedAt))) {
          return next({ phase: "removing", drain_calls: calls, drain_timed_out: 1 });
        }
        if (calls !== move.drain_calls || move.drain_started_at === null) {
          await updateOrgMove(db, move.id, {
            drain_calls: calls,
            drain_started_at: startedAt,
            updated_at: this.now(),
          });
        }
        return false;
      }
      case "removing": {
        // False: the source is down; its start-up deploy removes the org when it is back.
        await engines.deployOn(move.source_node_id, move.org_id);
        return next({ phase: "done", finished_at: this.now() });
      }
      case "done":
        return next({ finished_at: move.finished_at ?? this.now() });
    }
  }
}
