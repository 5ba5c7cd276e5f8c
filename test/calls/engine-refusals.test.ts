// Every refusal a real Asterisk 22 gave to a call-control action (fixtures/ami/call-control.json,
// recorded by test/engine/call-control.test.ts) becomes a documented error, never a 500.
import { readFileSync } from "node:fs";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { type ControlAction, refusalError } from "../../src/domain/calls/engine-refusals.js";
import { isDomainError } from "../../src/domain/errors.js";
import { type ActionAnswer, CALL_CONTROL_FILE } from "../../src/engine/testing/ami-transcript.js";

const recorded = (
  JSON.parse(readFileSync(CALL_CONTROL_FILE, "utf8")) as { answers: ActionAnswer[] }
).answers;
const refusals = recorded.filter((answer) => answer.response === "Error");

/** What the API answers for a recorded refusal, the channel filled in. */
const answerTo = (answer: ActionAnswer) =>
  refusalError(answer.action as ControlAction, answer.message.split("{channel}").join("PJSIP/x-1"));

test("each recorded refusal is a documented error: 404, 409 or 502", () => {
  assert.ok(refusals.length >= 8, `only ${refusals.length} refusals recorded`);
  for (const answer of refusals) {
    const error = answerTo(answer);
    assert.ok(isDomainError(error), `${answer.action} ${answer.case}`);
    assert.ok(
      [404, 409, 502].includes(error.status),
      `${answer.action} ${answer.case}: ${error.status}`,
    );
  }
});

test("a channel that is gone is the call not found; a route not loaded yet is a conflict", () => {
  const find = (action: string, which: string) => {
    const answer = refusals.find((a) => a.action === action && a.case === which);
    assert.ok(answer, `${action} ${which} is recorded`);
    return answerTo(answer!);
  };
  for (const action of ["BlindTransfer", "Hangup", "Getvar", "Setvar", "Redirect", "Bridge"]) {
    const error = find(action, "no such channel");
    assert.is(error.status, 404, action);
    assert.is(error.message, "Call not found");
  }
  const unloaded = find("Originate", "no such extension");
  assert.is(unloaded.status, 409);
  assert.is(unloaded.message, "The engine refused Originate: Extension does not exist.");
  // What pbxctl never sends on purpose is passed on as the engine's answer, not a crash.
  assert.is(find("Originate", "invalid channel").status, 502);
  assert.is(find("BlindTransfer", "no extension").status, 502);
});

test.run();
