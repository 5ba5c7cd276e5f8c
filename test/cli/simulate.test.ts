// `pbxctl simulate` in-process: picks the org that owns the DID among several files, prints
// numbered steps with their contexts, and --json returns the same simulation.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import Apply from "../../src/cli/commands/apply.js";
import Graph from "../../src/cli/commands/graph.js";
import Simulate from "../../src/cli/commands/simulate.js";
import type { Simulation } from "../../src/compiler/simulate.js";
import { ROOT, runCommand } from "./run-command.js";
import { storePerTest } from "./test-store.js";

const ORGS = join(ROOT, "orgs");

storePerTest(test);

test("simulate finds the org owning the DID and prints each step with its context", async () => {
  const out = await runCommand(Simulate, [ORGS, "--did", "08065978002", "--no-answer"]);
  assert.is(out.code, 0, out.stderr);
  assert.match(out.stdout, "Call to 08065978002 (Acme Corp):");
  assert.match(
    out.stdout,
    /1\. 08065978002 arrives, another form of \+918065978002.*_incoming,08065978002\]/,
  );
  assert.match(out.stdout, /queue Support \(2001\).*_queue,2001\]/);
  assert.match(out.stdout, /timeout destination queue 2000/);
  assert.match(out.stdout, /caller ID \+918065978001: the org's default DID/);
});

test("simulate --json returns the path a flow assertion checks", async () => {
  const out = await runCommand(Simulate, [
    join(ORGS, "acme.yaml"),
    "--did",
    "+918065978001",
    "--digits",
    "1",
    "--json",
  ]);
  assert.is(out.code, 0, out.stderr);
  const result = JSON.parse(out.stdout) as Simulation;
  assert.equal(result.path, ["ivr Main menu", "queue Sales"]);
  assert.is(result.outcome, "answered by a member of queue Sales");
});

test("simulate --at takes a time condition's branch by its zone's clock; a bad --at is one line", async () => {
  const file = join(ROOT, "fixtures/simulate/time-conditions/input.yaml");
  const closed = await runCommand(Simulate, [
    file,
    "--did",
    "+918065978001",
    "--at",
    "2026-03-27T08:30:00Z",
    "--json",
  ]);
  assert.is(closed.code, 0, closed.stderr + String(closed.error));
  assert.equal((closed.result as Simulation).path, ["time_condition office", "voicemail 101"]);
  const open = await runCommand(Simulate, [
    file,
    "--did",
    "+918065978001",
    "--at",
    "2026-03-30T08:30:00Z",
  ]);
  assert.match(open.stdout, "mon 2026-03-30 09:30 in Europe/London is within the open hours: open");
  const bad = await runCommand(Simulate, [file, "--did", "+918065978001", "--at", "tomorrow"]);
  assert.is(bad.code, 1);
  assert.match(
    bad.error?.message ?? "",
    "--at tomorrow: not an ISO 8601 time with its offset, such as 2026-03-27T18:30:00Z",
  );
});

test("simulate of a number no org owns fails with one line, exit 1", async () => {
  const out = await runCommand(Simulate, [ORGS, "--did", "+911111111111"]);
  assert.is(out.code, 1);
  assert.match(out.error?.message ?? "", "no org among the files has the DID +911111111111");
});

test("simulate --org and graph --org read the store instead of files", async () => {
  const dataDir = await mkdtemp(join(tmpdir(), "pbxctl-simulate-"));
  try {
    const file = join(ROOT, "fixtures", "simulate", "dids-and-queues", "input.yaml");
    const applied = await runCommand(Apply, [file, "--data-dir", dataDir, "--no-deploy"]);
    assert.is(applied.code, 0, String(applied.error));
    const org = "aaaaaaaa-0000-4000-8000-000000000001";
    const out = await runCommand(Simulate, [
      "--org",
      org,
      "--data-dir",
      dataDir,
      "--did",
      "+918065978005",
      "--no-answer",
      "--json",
    ]);
    assert.is(out.code, 0, String(out.error));
    assert.equal((JSON.parse(out.stdout) as Simulation).path, [
      "queue Ping",
      "queue Pong",
      "queue Ping",
    ]);
    const graph = await runCommand(Graph, ["--org", org, "--data-dir", dataDir]);
    assert.match(graph.stdout, 'queue_603 -->|"timeout 10 s"| queue_604');
    const missing = await runCommand(Simulate, [
      "--org",
      "nope",
      "--data-dir",
      dataDir,
      "--did",
      "1",
    ]);
    assert.is(missing.code, 1);
    assert.match(missing.error?.message ?? "", "Organization nope not found");
  } finally {
    await rm(dataDir, { recursive: true, force: true });
  }
});

test.run();
