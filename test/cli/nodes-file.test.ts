// `--nodes` (nodes.yaml, the GitOps form of engine nodes, placements and the SIP edge):
// `pbxctl compile` writes the edge's edge/ tree beside the Asterisk files, with phones' AORs
// saying support_path=yes; `plan --against` shows the edge's diff; every problem of the file is
// reported at file:line:col and nothing is written.
import { existsSync } from "node:fs";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import Compile from "../../src/cli/commands/compile.js";
import Plan from "../../src/cli/commands/plan.js";
import { compileEdge, edgeStateFromOrgs } from "../../src/compiler/edge/index.js";
import { loadOrgPaths } from "../../src/model/files.js";
import { checkPlacements, loadNodesFile } from "../../src/model/nodes-file.js";
import { ROOT, runCommand } from "./run-command.js";

let dir = "";
test.before.each(async () => {
  dir = await mkdtemp(join(tmpdir(), "pbxctl-nodes-file-"));
});
test.after.each(async () => {
  await rm(dir, { recursive: true, force: true });
});

const ACME = "org_4f1c2a9e-8b3d-4c7a-9e21-5d6f0a1b2c3d_";
const NODES = join(ROOT, "nodes.yaml");

test("compile --nodes writes edge/ as the edge compiler gives it, and AORs with support_path", async () => {
  const out = join(dir, "out");
  const run = await runCommand(Compile, [join(ROOT, "orgs"), "--out", out, "--nodes", NODES]);
  assert.is(run.code, 0, run.stderr);
  // Exactly the edge compiler's files for the example orgs and nodes.yaml.
  const orgs = (await loadOrgPaths([join(ROOT, "orgs")], {})).orgs.map((o) => o.state);
  const { loaded } = loadNodesFile(NODES, await readFile(NODES, "utf8"));
  const { edge, nodes, placements, carriers } = loaded!.nodes;
  const expected = compileEdge(
    edgeStateFromOrgs(orgs, new Map(Object.entries(placements)), nodes, edge, carriers),
  );
  for (const file of expected.files) {
    assert.is(await readFile(join(out, "edge", file.path), "utf8"), file.content, file.path);
  }
  const orgTable = await readFile(join(out, "edge/db/edge_orgs"), "utf8");
  assert.match(orgTable, `${ACME}:0:0:1,2:0`, "Acme on node-1, standby node-2");
  assert.match(orgTable, "globex_:0:0:2:0");
  const pjsip = await readFile(join(out, "orgs", ACME, "pjsip.conf"), "utf8");
  assert.match(pjsip, "support_path=yes");
  assert.ok(
    run.result!.files.some((f: { path: string }) => f.path === "edge/kamailio.cfg"),
    "listed among the written files",
  );

  // Without --nodes: no edge, no Path support.
  const plain = join(dir, "plain");
  assert.is((await runCommand(Compile, [join(ROOT, "orgs"), "--out", plain])).code, 0);
  assert.not.ok(existsSync(join(plain, "edge")));
  assert.not.match(await readFile(join(plain, "orgs", ACME, "pjsip.conf"), "utf8"), "support_path");

  // plan --against the compiled tree: a placement moved is the edge table's diff, exit 2.
  const moved = join(dir, "moved.yaml");
  await writeFile(
    moved,
    (await readFile(NODES, "utf8")).replace(
      "9b7e6d5c-4a3b-4c2d-8e1f-0a9b8c7d6e5f: { node: node-2 }",
      "9b7e6d5c-4a3b-4c2d-8e1f-0a9b8c7d6e5f: { node: node-1 }",
    ),
  );
  const same = await runCommand(Plan, [join(ROOT, "orgs"), "--against", out, "--nodes", NODES]);
  assert.is(same.code, 0, same.stdout + same.stderr);
  const plan = await runCommand(Plan, [join(ROOT, "orgs"), "--against", out, "--nodes", moved]);
  assert.is(plan.code, 2, plan.stderr);
  assert.match(plan.stdout, "+++ b/edge/db/edge_orgs");
  assert.match(plan.stdout, "-1:globex_:0:0:2:0\n+1:globex_:0:0:1:0");
});

test("a nodes file's problems are reported at file:line:col and nothing is written", async () => {
  const file = join(dir, "nodes.yaml");
  const cases: [string, string][] = [
    [
      "edge: { sip_address: 203.0.113.10, data_dir: /e }\nnodes:\n  - { name: node-1, sip_address: '10.0.0.11', colour: red }\n",
      `${file}:3:47 nodes[0].colour: unknown field "colour"`,
    ],
    [
      "edge: { sip_address: 203.0.113.10, data_dir: /e }\nnodes:\n  - { name: node-1, sip_address: '10.0.0.11' }\n  - { name: node-1, sip_address: '10.0.0.12' }\n",
      `${file}:4:13 nodes[1].name: node node-1 is defined twice`,
    ],
    [
      "edge: { sip_address: 203.0.113.10, data_dir: /e }\nnodes:\n  - { name: node-1, sip_address: '10.0.0.11' }\nplacements:\n  4f1c2a9e-8b3d-4c7a-9e21-5d6f0a1b2c3d: { node: node-1, standby_node: node-1 }\n",
      `${file}:5:71 placements.4f1c2a9e-8b3d-4c7a-9e21-5d6f0a1b2c3d.standby_node: the standby node must be another node than the primary node`,
    ],
    [
      "edge: { sip_address: 203.0.113.10, data_dir: /e }\nnodes:\n  - { name: node-1, sip_address: '10.0.0.11' }\nplacements:\n  11111111-2222-4333-8444-555555555555: { node: node-1 }\n",
      `${file}:5:41 placements.11111111-2222-4333-8444-555555555555: no org file defines org 11111111-2222-4333-8444-555555555555`,
    ],
  ];
  for (const [text, message] of cases) {
    await writeFile(file, text);
    const out = join(dir, "out");
    const run = await runCommand(Compile, [join(ROOT, "orgs"), "--out", out, "--nodes", file]);
    assert.is(run.code, 1, text);
    assert.match(run.stderr, message, run.stderr);
    assert.not.ok(existsSync(out), "nothing written");
  }
});

test("an active org without a placement is a warning: the edge does not route it", async () => {
  const text =
    "edge: { sip_address: 203.0.113.10, data_dir: /e }\nnodes:\n  - { name: node-1, sip_address: '10.0.0.11' }\nplacements: {}\n";
  const { loaded, diagnostics } = loadNodesFile("nodes.yaml", text);
  assert.equal(diagnostics, []);
  const warnings = checkPlacements(loaded!, [
    { id: "a", name: "Acme", active: true },
    { id: "b", name: "Old", active: false },
  ]);
  assert.equal(
    warnings.map((d) => `${d.severity} ${d.line}:${d.col} ${d.message}`),
    ["warning 4:13 org Acme (a) has no placement: the edge does not route it"],
  );
  assert.equal(loaded!.nodes.edge.sip_port, 5060, "defaults filled");
  assert.equal(loaded!.nodes.nodes[0]!.state, "active");
});

test.run();
