import Validate from "./validate.js";

// The same check as validate (lint findings are part of its output); the name operators look for.
export default class Lint extends Validate {
  static override summary = "Find call flows that compile but probably do not do what was meant.";
  static override description =
    "Validates the org files and runs the lint rules (docs/lint.md): unreachable-ivr, " +
    "did-without-route, queue-without-members, option-to-inactive-ivr, timeout-zero, " +
    "overlapping-patterns, queue-timeout-loop. Findings are warnings at file:line:col (exit 0); " +
    "with --strict they are errors (exit 1).";
  // oclif reads these statics from the class itself, not its parent.
  static override strict = false;
  static override examples = [
    "<%= config.bin %> <%= command.id %> orgs",
    "<%= config.bin %> <%= command.id %> orgs/acme.yaml --strict --json",
  ];
}
