// `pbxctl apply --nodes nodes.yaml`: the store's nodes and placements follow the nodes file after
// the org files (a new org is placed as the file says); a node the file names must be in the store
// (its AMI credentials are not in the file); --dry-run writes nothing; a second apply changes
// nothing; the admin API's placement rules hold (a draining node takes no new org).
import { mkdtempSync, writeFileSync } from "node:fs";
import { readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import Apply from "../../src/cli/commands/apply.js";
import NodesAdd from "../../src/cli/commands/nodes/add.js";
import { openDataStore } from "../../src/domain/config/gitops.js";
import { listEngineNodes } from "../../src/domain/nodes/engine-nodes.js";
import { getPlacement } from "../../src/domain/nodes/placement.js";
import { ROOT, runCommand } from "./run-command.js";
import { storePerTest } from "./test-store.js";

const ACME = "4f1c2a9e-8b3d-4c7a-9e21-5d6f0a1b2c3d";
const GLOBEX = "9b7e6d5c-4a3b-4c2d-8e1f-0a9b8c7d6e5f";
const ORGS = join(ROOT, "orgs");

storePerTest(test);

let dataDir = "";
test.before.each(() => {
  dataDir = mkdtempSync(join(tmpdir(), "pbx-apply-nodes-"));
});
test.after.each(async () => {
  await rm(dataDir, { recursive: true, force: true });
});

async function addNode(name: string, sip: string) {
  const secret = join(dataDir, `${name}.secret`);
  writeFileSync(secret, "secret");
  const added = await runCommand(NodesAdd, [
    name,
    "--ami-user",
    "pbxctl",
    "--ami-secret-file",
    secret,
    "--sip-address",
    sip,
    "--capacity",
    "10",
    "--data-dir",
    dataDir,
  ]);
  assert.is(added.code, 0, added.stderr + String(added.error));
}

async function nodesFile(edit = (text: string) => text): Promise<string> {
  const file = join(dataDir, "nodes.yaml");
  writeFileSync(file, edit(await readFile(join(ROOT, "nodes.yaml"), "utf8")));
  return file;
}

const apply = (nodes: string, ...extra: string[]) =>
  runCommand(Apply, [ORGS, "--nodes", nodes, "--no-deploy", "--data-dir", dataDir, ...extra]);

async function stored() {
  const store = await openDataStore(process.env, dataDir, { create: false });
  try {
    const place = async (id: string) => {
      const p = await getPlacement(store.db, id).catch(() => null); // no such org yet
      return p ? `${p.node}${p.standby_node ? `,${p.standby_node}` : ""}` : null;
    };
    return {
      acme: await place(ACME),
      globex: await place(GLOBEX),
      nodes: (await listEngineNodes(store)).map((n) => `${n.name} ${n.sip_address} ${n.state}`),
    };
  } finally {
    await store.db.destroy();
  }
}

test("apply --nodes places the orgs as the file says, then changes only what differs", async () => {
  // The store first (orgs placed on the least-loaded node as they are created)...
  assert.is((await runCommand(Apply, [ORGS, "--no-deploy", "--data-dir", dataDir])).code, 0);
  await addNode("node-1", "10.0.0.11:5060");
  await addNode("node-2", "10.0.0.99:5060");
  const file = await nodesFile();

  const dry = await apply(file, "--dry-run");
  assert.is(dry.code, 0, dry.stderr + String(dry.error));
  assert.match(dry.stdout, "would change 3 node(s) or placement(s)");
  assert.match(dry.stdout, "~ node node-2: sip_address 10.0.0.12:5060");
  assert.match(dry.stdout, `~ placement ${ACME}: node-1, standby node-2`);
  assert.equal(await stored(), {
    acme: "node-1",
    globex: "node-1",
    nodes: ["node-1 10.0.0.11:5060 active", "node-2 10.0.0.99:5060 active"],
  });

  const applied = await apply(file, "--json");
  assert.is(applied.code, 0, applied.stderr + String(applied.error));
  assert.is(applied.result!.nodes.length, 3);
  assert.equal(await stored(), {
    acme: "node-1,node-2",
    globex: "node-2",
    nodes: ["node-1 10.0.0.11:5060 active", "node-2 10.0.0.12:5060 active"],
  });

  const again = await apply(file);
  assert.is(again.code, 0, again.stderr);
  assert.match(again.stdout, "no change to nodes or placements");

  // node-1 draining in the file and Globex back on it: a draining node takes no new org.
  const draining = await nodesFile((text) =>
    text
      .replace(
        '{ name: node-1, sip_address: "10.0.0.11:5060" }',
        '{ name: node-1, sip_address: "10.0.0.11:5060", state: draining }',
      )
      .replace(`${GLOBEX}: { node: node-2 }`, `${GLOBEX}: { node: node-1 }`),
  );
  const refused = await apply(draining);
  assert.is(refused.code, 1);
  assert.match(
    refused.error!.message,
    "--nodes: Engine node 'node-1' is draining: it takes no new organization",
  );
});

test("apply --nodes with a node not in the store, or an error in the file, applies nothing", async () => {
  await (await openDataStore(process.env, dataDir, { create: true })).db.destroy();
  await addNode("node-1", "10.0.0.11:5060");
  const unknown = await apply(await nodesFile());
  assert.is(unknown.code, 1);
  assert.match(unknown.error!.message, "engine node 'node-2' is not in the store: add it with");
  assert.equal((await stored()).acme, null, "no org file applied either");

  const broken = await apply(
    await nodesFile((text) => text.replace("sip_port: 5060", "sip_port: x")),
  );
  assert.is(broken.code, 1);
  assert.match(broken.stderr, "edge.sip_port");
  assert.equal((await stored()).acme, null);

  // Both nodes in the store: a first apply creates the orgs, then places them as the file says.
  await addNode("node-2", "10.0.0.12:5060");
  const first = await apply(await nodesFile());
  assert.is(first.code, 0, first.stderr + String(first.error));
  const { acme, globex } = await stored();
  assert.equal([acme, globex], ["node-1,node-2", "node-2"]);

  // A placement of an org that no org file and no store has is refused, naming it.
  const stranger = "cccccccc-0000-4000-8000-00000000000c";
  const orphan = await apply(
    await nodesFile((text) =>
      text.replace("placements: #", `placements:\n  ${stranger}: { node: node-1 } #`),
    ),
  );
  assert.is(orphan.code, 1);
  assert.match(orphan.error!.message, `placement of ${stranger}: no such organization`);
});

test.run();
