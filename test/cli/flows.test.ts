// `pbxctl test <flows dir>`: flow assertions beside the org files pass on the examples, fail
// with a plain message when the call flow changes, and report bad flow files at file:line:col.
import { cp, mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import Test from "../../src/cli/commands/test.js";
import type { FlowRun } from "../../src/cli/lib/flows.js";
import { ROOT, runCommand } from "./run-command.js";

let dir = "";
test.before(async () => {
  dir = await mkdtemp(join(tmpdir(), "pbxctl-flows-"));
});
test.after(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** A copy of the example orgs and flows, with `edit` applied to acme.yaml. */
async function workspace(name: string, edit: (text: string) => string = (t) => t) {
  const root = join(dir, name);
  await cp(join(ROOT, "orgs"), root, { recursive: true });
  const acme = join(root, "acme.yaml");
  await writeFile(acme, edit(await readFile(acme, "utf8")));
  return root;
}

test("the example flows pass against the example orgs: exit 0", async () => {
  const out = await runCommand(Test, [join(ROOT, "orgs", "flows")]);
  assert.is(out.code, 0, out.stdout);
  assert.match(out.stdout, "PASS Main line, option 1 reaches Sales, then Carol's mobile");
  assert.match(out.stdout, /Flows: 3 passed, 0 failed\./);
});

test("a changed queue timeout fails the flow with what was expected and what happens now: exit 1", async () => {
  const root = await workspace("changed", (text) =>
    text.replace(
      "timeout_destination_type: user\n    timeout_destination: 1003",
      "timeout_destination_type: user\n    timeout_destination: 1002",
    ),
  );
  const out = await runCommand(Test, [join(root, "flows"), "--json"]);
  assert.is(out.code, 1);
  const run = JSON.parse(out.stdout) as FlowRun;
  assert.is(run.failed, 2);
  const failing = run.results.find((r) => r.name.startsWith("Main line"))!;
  assert.is(failing.passed, false);
  assert.equal(failing.failures, [
    "when nobody answers, expected ivr Main menu -> queue Sales -> user 1003 -> phone +919876543210, but the call goes ivr Main menu -> queue Sales -> user 1002 (Bob Iyer (1002) does not answer within 25 s: hung up)",
  ]);
  assert.is(failing.line, 4);
});

test("a flow naming something the org lacks, and a bad field, are errors at file:line:col", async () => {
  const root = await workspace("bad");
  await writeFile(
    join(root, "flows", "acme.yaml"),
    [
      "flows:",
      "  - call: +918065978001",
      "    press: [1]",
      "    expect: [ivr Main menu, queue Slaes]",
      "  - call: +918065978001",
      "    expect: [somewhere]",
      "",
    ].join("\n"),
  );
  const out = await runCommand(Test, [join(root, "flows")]);
  assert.is(out.code, 1);
  const file = join(root, "flows", "acme.yaml");
  assert.match(out.stdout, `${file}:6:14 flows[1].expect[0]: must match a destination`);
  assert.not.match(out.stdout, "PASS");
  await writeFile(
    file,
    "flows:\n  - call: +918065978001\n    press: [1]\n    expect: [ivr Main menu, queue Slaes]\n",
  );
  const out2 = await runCommand(Test, [join(root, "flows")]);
  assert.is(out2.code, 1);
  assert.match(out2.stdout, `${file}:4:29 flows[0].expect[1]: Acme Corp has no queue Slaes`);
});

test("no flow files is a usage error: exit 2", async () => {
  const root = await workspace("empty");
  await rm(join(root, "flows"), { recursive: true });
  await mkdir(join(root, "flows"));
  const out = await runCommand(Test, [join(root, "flows")]);
  assert.is(out.code, 2);
});

test.run();
