// `pbxctl graph`: Mermaid on stdout by default, DOT, and SVG written with --out.
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import Graph from "../../src/cli/commands/graph.js";
import { ROOT, runCommand } from "./run-command.js";

const ACME = join(ROOT, "orgs", "acme.yaml");

test("graph prints the example org as a Mermaid flowchart by default", async () => {
  const out = await runCommand(Graph, [ACME]);
  assert.is(out.code, 0, out.stderr);
  assert.match(out.stdout, /^flowchart LR\n/);
  assert.match(out.stdout, "did_918065978001 --> ivr_3000");
  assert.match(out.stdout, 'queue_2001 -->|"timeout 300 s"| queue_2000');
});

test("graph --format dot, and --format svg --out writes an SVG file", async () => {
  const dot = await runCommand(Graph, [ACME, "--format", "dot"]);
  assert.match(dot.stdout, /^digraph "Acme Corp" \{/);
  const dir = await mkdtemp(join(tmpdir(), "pbxctl-graph-"));
  try {
    const file = join(dir, "acme.svg");
    const out = await runCommand(Graph, [ACME, "--format", "svg", "--out", file]);
    assert.is(out.code, 0, out.stderr);
    assert.is(out.stdout, "");
    assert.match(await readFile(file, "utf8"), "<svg");
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test("graph of a directory with two orgs asks for one", async () => {
  const out = await runCommand(Graph, [join(ROOT, "orgs")]);
  assert.is(out.code, 1);
  assert.match(out.error?.message ?? "", "graph draws one org");
});

test.run();
