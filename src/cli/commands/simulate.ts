import { Args, Flags } from "@oclif/core";
import { systemClock } from "../../clock.js";
import {
  digitsFromText,
  instantFromText,
  type Simulation,
  simulateCall,
} from "../../compiler/simulate.js";
import { findDid } from "../../model/refs.js";
import { CommandFailure, PbxCommand } from "../lib/base-command.js";
import { loadOrgStates, orgSourceFlags } from "../lib/org-source.js";
import { formatSimulation } from "../lib/simulation-text.js";

export default class Simulate extends PbxCommand {
  static override summary = "Show what happens when someone calls a DID and presses digits.";
  static override description =
    "Walks the org's call graph as the generated dialplan runs it: the DID's aliases, IVR menus " +
    "(timeouts, retries, invalid digits, inactive IVRs), queues and their timeout destinations, " +
    "time conditions (open, closed or a holiday, by the clock of their zone at --at), " +
    "users, voicemail, callbacks and outbound routes with the caller ID chosen. Each step names " +
    "its generated context and extension. Nothing is dialled. With several org files, the org " +
    "that owns the DID is used.";
  static override examples = [
    "<%= config.bin %> <%= command.id %> orgs/acme.yaml --did +918065978001 --digits 1",
    "<%= config.bin %> <%= command.id %> orgs --did 08065978001 --digits 2 --no-answer",
    '<%= config.bin %> <%= command.id %> --org acme --did +918065978001 --digits ",3" --json',
    "<%= config.bin %> <%= command.id %> orgs/acme.yaml --did +918065978001 --at 2026-03-27T18:30:00Z",
  ];
  static override args = {
    paths: Args.string({ description: "Org files (*.yaml) or directories; or use --org." }),
  };
  static override strict = false;
  static override flags = {
    did: Flags.string({ required: true, summary: "The number called (local, 91... or +91...)." }),
    digits: Flags.string({
      summary: "What the caller presses at each prompt, comma-separated; an empty entry waits.",
      default: "",
    }),
    caller: Flags.string({ summary: "The caller's number (what a callback option stores)." }),
    "no-answer": Flags.boolean({
      summary: "Nobody answers: queues wait out max_wait, users their ring time.",
    }),
    at: Flags.string({
      summary:
        "When the call is made, ISO 8601 with its offset (2026-03-27T18:30:00Z); default now. Time conditions take the branch their zone's clock shows then.",
    }),
    ...orgSourceFlags,
  };

  async run(): Promise<Simulation> {
    const { argv, flags } = await this.parse(Simulate);
    const orgs = await loadOrgStates(argv as string[], flags, (r) =>
      this.printDiagnostics(r.diagnostics),
    );
    const at = flags.at === undefined ? systemClock().getTime() : instantFromText(flags.at);
    if (at === undefined) {
      throw new CommandFailure(
        `--at ${flags.at}: not an ISO 8601 time with its offset, such as 2026-03-27T18:30:00Z`,
      );
    }
    const state = orgs.length === 1 ? orgs[0]! : orgs.find((o) => findDid(o, flags.did));
    if (!state) throw new CommandFailure(`no org among the files has the DID ${flags.did}`);
    const result = simulateCall(state, {
      did: flags.did,
      digits: digitsFromText(flags.digits),
      ...(flags.caller === undefined ? {} : { caller: flags.caller }),
      noAnswer: flags["no-answer"],
      at,
    });
    if (!this.jsonEnabled()) this.log(formatSimulation(result));
    return result;
  }
}
