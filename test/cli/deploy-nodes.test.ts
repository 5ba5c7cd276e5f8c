// `pbxctl deploy --nodes nodes.yaml` (GitOps with engine nodes and the SIP edge): the engine tree
// with phones' AORs saying support_path=yes, then the edge in the nodes file's data_dir:
// kamailio.cfg written, the tables pushed to the running edge (the fast suite's JSON-RPC stand-in,
// test/deploy/fake-edge.ts) and read back; a second deploy changes nothing on the edge; a moved
// placement is one htable entry; --no-edge-push writes files only; an edge that does not answer is
// exit 1; a nodes file with an error deploys nothing at all.
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import Deploy from "../../src/cli/commands/deploy.js";
import { compileEdge, edgeStateFromOrgs } from "../../src/compiler/edge/index.js";
import { loadOrgPaths } from "../../src/model/files.js";
import { loadNodesFile } from "../../src/model/nodes-file.js";
import { type FakeEdge, startFakeEdge } from "../deploy/fake-edge.js";
import { ROOT, runCommand } from "./run-command.js";

const ACME = "org_4f1c2a9e-8b3d-4c7a-9e21-5d6f0a1b2c3d_";
const GLOBEX = "9b7e6d5c-4a3b-4c2d-8e1f-0a9b8c7d6e5f";
const ORGS = join(ROOT, "orgs");

let dir = "";
let edgeDir = "";
let etc = "";
let edge: FakeEdge | null = null;

test.before.each(async () => {
  dir = await mkdtemp(join(tmpdir(), "pbxctl-deploy-nodes-"));
  edgeDir = join(dir, "edge");
  etc = join(dir, "etc");
  await mkdir(edgeDir);
});
test.after.each(async () => {
  await edge?.close();
  edge = null;
  await rm(dir, { recursive: true, force: true });
});

/** The repository's nodes.yaml with the edge's directory and JSON-RPC port of this test. */
async function nodesFile(rpcPort: number, edit = (text: string) => text): Promise<string> {
  const file = join(dir, "nodes.yaml");
  const text = (await readFile(join(ROOT, "nodes.yaml"), "utf8"))
    .replace("data_dir: /etc/kamailio/pbxctl", `data_dir: ${edgeDir}`)
    .replace("rpc_port: 5081", `rpc_port: ${rpcPort}`);
  await writeFile(file, edit(text));
  return file;
}

const deploy = (nodes: string, ...extra: string[]) =>
  runCommand(Deploy, [ORGS, "--etc", etc, "--engine", "none", "--nodes", nodes, ...extra]);

test("deploy --nodes deploys the engine tree, then writes the edge and pushes its tables, read back", async () => {
  // The edge runs already (on its data files as edge init left them): the fake reloads from them.
  const nodes = await nodesFile(1);
  const first = await deploy(nodes, "--no-edge-push");
  assert.is(first.code, 0, first.stderr);
  assert.match(
    first.stderr,
    "kamailio.cfg written: a running Kamailio takes it only when restarted",
  );
  edge = await startFakeEdge(edgeDir);
  const pushed = await nodesFile(edge.port);
  await writeFile(join(edgeDir, "db", "edge_orgs"), ""); // the running edge knows no org yet

  const run = await deploy(pushed, "--json");
  assert.is(run.code, 0, run.stderr + run.stdout + String(run.error));
  const result = run.result!;
  assert.match(await readFile(join(etc, "orgs", ACME, "pjsip.conf"), "utf8"), "support_path=yes");
  // Exactly the edge compiler's files, in the nodes file's data_dir.
  const orgs = (await loadOrgPaths([ORGS], {})).orgs.map((o) => o.state);
  const { loaded } = loadNodesFile(pushed, await readFile(pushed, "utf8"));
  const { edge: listen, nodes: nodeList, placements, carriers } = loaded!.nodes;
  const expected = compileEdge(
    edgeStateFromOrgs(orgs, new Map(Object.entries(placements)), nodeList, listen, carriers),
  );
  for (const file of expected.files) {
    assert.is(await readFile(join(edgeDir, file.path), "utf8"), file.content, file.path);
  }
  // Pushed: every org entry set on the running edge, which now holds what was compiled.
  assert.equal(result.edge.error, null);
  assert.is(result.edge.applied.orgKeysChanged, expected.tables.orgs.size);
  assert.equal(new Map(edge.htables.orgs), expected.tables.orgs);
  assert.ok(edge.calls.includes("htable.dump orgs"), "read back");
  assert.is(result.edge.configChanged, true, "the port changed: kamailio.cfg written");

  // Again: nothing to change on the engine or the edge.
  edge.calls.length = 0;
  const again = await deploy(pushed, "--json");
  assert.is(again.code, 0, again.stderr);
  assert.is(again.result!.edge.configChanged, false);
  assert.is(again.result!.edge.applied.orgKeysChanged, 0);
  assert.not.ok(
    edge.calls.some((call) => /sets|delete|reload/.test(call)),
    edge.calls.join(),
  );

  // Globex placed on node-1 instead: one org entry changes, no node or carrier reload.
  const moved = await nodesFile(edge.port, (text) =>
    text.replace(`${GLOBEX}: { node: node-2 }`, `${GLOBEX}: { node: node-1 }`),
  );
  edge.calls.length = 0;
  const move = await deploy(moved);
  assert.is(move.code, 0, move.stderr);
  assert.equal(
    edge.calls.filter((call) => /sets|delete|reload/.test(call)),
    ["htable.sets orgs globex_ 1"],
  );
  assert.match(move.stdout, "pushed and read back, 1 org and 0 DID entries changed");
});

test("deploy --nodes: an edge that does not answer is exit 1 after the engine tree; --no-edge-push writes files only", async () => {
  edge = await startFakeEdge(edgeDir);
  const nodes = await nodesFile(edge.port);
  await edge.down();
  const refused = await deploy(nodes);
  assert.is(refused.code, 1, refused.stdout);
  assert.ok(existsSync(join(etc, "orgs", ACME, "pjsip.conf")), "the engine tree was deployed");
  assert.match(refused.stdout, `edge ${edgeDir}: `);

  const filesOnly = await deploy(nodes, "--no-edge-push");
  assert.is(filesOnly.code, 0, filesOnly.stderr);
  assert.match(filesOnly.stdout, "files written, not pushed (--no-edge-push)");
  assert.match(await readFile(join(edgeDir, "db", "edge_orgs"), "utf8"), `${ACME}:0:0:1,2:0`);
});

test("deploy --nodes with an error in the nodes file deploys nothing, engine nor edge", async () => {
  const nodes = await nodesFile(1, (text) => text.replace("node: node-2 }", "node: node-9 }"));
  const run = await deploy(nodes);
  assert.is(run.code, 1);
  assert.match(run.stderr, "node-9");
  assert.not.ok(existsSync(join(etc, "orgs")), "no engine file");
  assert.not.ok(existsSync(join(edgeDir, "kamailio.cfg")), "no edge file");
});

test.run();
