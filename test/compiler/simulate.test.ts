// Golden cases of the call-flow simulator: fixtures/simulate/<case>/input.yaml (one org) and
// calls.yaml (the calls to simulate) give exactly expected.txt. UPDATE_GOLDEN=1 rewrites it.
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { parse } from "yaml";
import { formatSimulation } from "../../src/cli/lib/simulation-text.js";
import { compileOrg } from "../../src/compiler/index.js";
import {
  instantFromText,
  type SimulationInput,
  simulateCall,
} from "../../src/compiler/simulate.js";
import { loadOrgSources } from "../../src/model/files.js";
import type { OrgState } from "../../src/model/org-state.js";
import { expectGoldenText, FIXTURES } from "./golden.js";

const DIR = join(FIXTURES, "simulate");

function loadOrg(dir: string): OrgState {
  const file = join(dir, "input.yaml");
  const loaded = loadOrgSources([{ file, text: readFileSync(file, "utf8") }], {});
  const errors = loaded.diagnostics.filter((d) => d.severity === "error");
  assert.equal(errors, [], "the case's org must be valid");
  return loaded.orgs[0]!.state;
}

interface CallLine {
  did: string;
  digits?: string[];
  caller?: string;
  no_answer?: boolean;
  at?: string;
}

function simulateCase(name: string): string {
  const dir = join(DIR, name);
  const state = loadOrg(dir);
  const calls = parse(readFileSync(join(dir, "calls.yaml"), "utf8")) as CallLine[];
  return calls
    .map((call) => {
      const input: SimulationInput = {
        did: call.did,
        digits: call.digits ?? [],
        noAnswer: call.no_answer ?? false,
        ...(call.caller ? { caller: call.caller } : {}),
        ...(call.at ? { at: instantFromText(call.at)! } : {}),
      };
      const flags = [
        `--did ${call.did}`,
        ...(call.digits?.length ? [`--digits ${call.digits.join(",")}`] : []),
        ...(call.caller ? [`--caller ${call.caller}`] : []),
        ...(call.no_answer ? ["--no-answer"] : []),
        ...(call.at ? [`--at ${call.at}`] : []),
      ];
      return `$ pbxctl simulate ${flags.join(" ")}\n${formatSimulation(simulateCall(state, input))}\n`;
    })
    .join("\n");
}

const cases = readdirSync(DIR).filter((name) => existsSync(join(DIR, name, "calls.yaml")));

test("there are simulator cases", () => {
  assert.ok(cases.length >= 3, `only ${cases.length} cases`);
});

for (const name of cases) {
  test(`simulate golden: ${name}`, () => {
    const actual = simulateCase(name);
    assert.is(simulateCase(name), actual, "simulating twice must give the same text");
    expectGoldenText(join(DIR, name, "expected.txt"), actual);
  });
}

// Every step names a context and extension the compiled dialplan really has (patterns and the
// engine-absent extensions of dead ends excepted), so the simulator cannot invent places.
for (const name of cases) {
  test(`simulate: every step of ${name} is a real place in the compiled dialplan`, () => {
    const state = loadOrg(join(DIR, name));
    const conf = compileOrg(state).files.find((f) => f.path.endsWith("/extensions.conf"))!.content;
    const places = new Set<string>();
    let context = "";
    for (const line of conf.split("\n")) {
      const section = /^\[(.+)\]$/.exec(line);
      if (section) context = section[1]!;
      const exten = /^exten => ([^,]+),/.exec(line);
      if (exten) places.add(`${context},${exten[1]}`);
    }
    const calls = parse(readFileSync(join(DIR, name, "calls.yaml"), "utf8")) as CallLine[];
    for (const call of calls) {
      const result = simulateCall(state, {
        did: call.did,
        digits: call.digits ?? [],
        noAnswer: call.no_answer ?? false,
        ...(call.at ? { at: instantFromText(call.at)! } : {}),
      });
      for (const step of result.steps) {
        if (
          (step.kind === "end" || step.kind === "fallthrough") &&
          /absent|no extension|no outbound route|not an assigned/.test(step.text)
        )
          continue;
        assert.ok(
          places.has(`${step.context},${step.exten}`),
          `${call.did}: step at ${step.context},${step.exten} (${step.text}) is not in the dialplan`,
        );
      }
    }
  });
}

test.run();
