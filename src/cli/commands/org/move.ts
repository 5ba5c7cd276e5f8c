import { Args, Flags } from "@oclif/core";
import { systemTimers, type Timers } from "../../../clock.js";
import { findOrgId } from "../../../domain/config/export.js";
import { followOrgMove, NoMoveDriver } from "../../../domain/nodes/org-move-follow.js";
import {
  MAX_CALL_DRAIN_TIMEOUT_S,
  moveOrg,
  type OrgMoveView,
} from "../../../domain/nodes/org-moves.js";
import { CommandFailure, PbxCommand } from "../../lib/base-command.js";
import { parseDurationSeconds } from "../../lib/duration.js";
import { OrgMoveExitCode } from "../../lib/exit-codes.js";
import { dataDirFlag, withNodeStore } from "../../lib/node-store.js";

export default class OrgMove extends PbxCommand {
  /** The waits between looks at the move; tests put timers of their own here. */
  static timers: Timers = systemTimers;

  static override summary = "Move an org to another engine node without cutting its calls.";
  static override description =
    "What POST /admin/organizations/{id}/move does: the move is recorded in the store and " +
    "carried out by `pbxctl serve` (the holder of the org-moves lease): the org is deployed on " +
    "the target and verified, its placement (and the SIP edge) switched, its registered phones " +
    "told to re-register (with an edge), the source's calls of the org waited for (at most " +
    "--call-drain-timeout, then the move goes on), and the org removed from the source. Waits " +
    "and prints each phase unless --no-wait.";
  static override examples = [
    "<%= config.bin %> <%= command.id %> acme --to node-2",
    "<%= config.bin %> <%= command.id %> acme --to node-2 --call-drain-timeout 15m --no-wait",
  ];
  static override args = {
    org: Args.string({ required: true, description: "Org id or slug." }),
  };
  static override flags = {
    to: Flags.string({ required: true, summary: "The target node's name (or id)." }),
    "call-drain-timeout": Flags.string({
      summary:
        "How long to wait for the org's calls on the source to end: 90s, 15m, 2h (default 1h, at most 24h).",
    }),
    wait: Flags.boolean({
      default: true,
      allowNo: true,
      summary:
        "Wait until the move is done, printing its phases (--no-wait: print the move and return).",
    }),
    ...dataDirFlag,
  };

  async run(): Promise<OrgMoveView> {
    const { args, flags } = await this.parse(OrgMove);
    const timeout = flags["call-drain-timeout"];
    let seconds: number | undefined;
    if (timeout !== undefined) {
      const parsed = parseDurationSeconds(timeout);
      if (parsed === null || parsed < 1 || parsed > MAX_CALL_DRAIN_TIMEOUT_S) {
        throw new CommandFailure(
          `invalid --call-drain-timeout: ${timeout} (need a duration like 90s, 15m or 2h, at most 24h)`,
        );
      }
      seconds = parsed;
    }
    return withNodeStore(flags["data-dir"], async (deps) => {
      const orgId = await findOrgId(deps.db, args.org);
      let move = await moveOrg(deps, orgId, {
        to: flags.to,
        ...(seconds !== undefined ? { call_drain_timeout_seconds: seconds } : {}),
      });
      this.say(`${args.org}: moving from ${move.from_node} to ${move.to_node} (move ${move.id})`);
      this.say(phaseLine(move));
      if (!flags.wait) return move;
      let shown = phaseLine(move);
      try {
        move = await followOrgMove(deps, orgId, {
          timers: OrgMove.timers,
          onLook: (seen) => {
            const line = phaseLine(seen);
            if (line !== shown) this.say(line);
            shown = line;
          },
        });
      } catch (error) {
        if (error instanceof NoMoveDriver) {
          throw new CommandFailure(error.message, OrgMoveExitCode.noDriver);
        }
        throw error;
      }
      return move;
    });
  }

  private say(line: string): void {
    if (!this.jsonEnabled()) this.log(line);
  }
}

/** One line per phase (and per change of what the phase reports). */
export function phaseLine(move: OrgMoveView): string {
  const details: string[] = [];
  if (move.phase === "deploying") details.push(`on ${move.to_node}, verified`);
  if (move.phase === "re-registering") details.push("waiting for the edge to route to the target");
  if (move.phones_notified !== null && move.phase === "draining") {
    details.push(`${move.phones_notified} phones told to re-register`);
  }
  if (move.drain && move.phase === "draining") {
    const calls = move.drain.calls === null ? "unknown" : String(move.drain.calls);
    details.push(`calls of the org on ${move.from_node}: ${calls}, until ${move.drain.deadline}`);
  }
  if (move.phase === "removing") details.push(`from ${move.from_node}`);
  if (move.phase === "done" && move.drain?.timed_out) {
    details.push(`the drain timed out with ${move.drain.calls ?? "unknown"} calls up`);
  }
  if (move.last_error) details.push(`retrying: ${move.last_error}`);
  return `${move.phase.padEnd(15)}${details.join("; ")}`.trimEnd();
}
