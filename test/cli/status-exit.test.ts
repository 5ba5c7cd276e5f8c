// `pbxctl status` exit codes: the worst state of any unit, so a script tells "all live" from
// "not live yet", "changed behind pbxctl's back" and "a deploy failed".
import { test } from "uvu";
import * as assert from "uvu/assert";
import { StatusExitCode } from "../../src/cli/lib/exit-codes.js";
import { statusExitCode } from "../../src/cli/lib/status-table.js";
import type { UnitStatus } from "../../src/deploy/status.js";

function unit(state: Partial<UnitStatus>): UnitStatus {
  return {
    unit: "org:one_",
    org: "one",
    desiredRevision: "a",
    appliedRevision: "a",
    appliedAt: null,
    lastDeploy: null,
    health: null,
    pending: false,
    drifted: [],
    ...state,
  };
}

const ok = unit({});
const pending = unit({ pending: true });
const drifted = unit({ drifted: [{ path: "orgs/one_/pjsip.conf", change: "changed" }] });
const failed = unit({
  lastDeploy: {
    at: "2026-11-26T00:00:00Z",
    result: "failed",
    trigger: "deploy",
    revision: "b",
    reloads: [],
  },
});

test("0 when every unit is OK (or none is recorded)", () => {
  assert.is(statusExitCode([ok, ok]), 0);
  assert.is(statusExitCode([]), 0);
});

test("3 PENDING, 4 DRIFTED, 5 FAILED: the worst unit wins", () => {
  assert.is(statusExitCode([ok, pending]), StatusExitCode.pending);
  assert.is(StatusExitCode.pending, 3);
  assert.is(statusExitCode([pending, drifted]), 4);
  assert.is(statusExitCode([drifted, failed, pending]), 5);
  assert.is(statusExitCode([failed]), 5);
});

test.run();
