// `pbxctl nodes list|add|update|drain|remove` over the server's store: the first node takes the
// existing orgs, counts per node, drain, the secret sealed and never printed, precise refusals.
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import NodesAdd from "../../src/cli/commands/nodes/add.js";
import NodesDrain from "../../src/cli/commands/nodes/drain.js";
import NodesList, { type NodesListResult } from "../../src/cli/commands/nodes/list.js";
import NodesPin, { type NodesPinResult } from "../../src/cli/commands/nodes/pin.js";
import NodesRemove from "../../src/cli/commands/nodes/remove.js";
import NodesUpdate from "../../src/cli/commands/nodes/update.js";
import { openDataStore } from "../../src/domain/config/gitops.js";
import { decrypt } from "../../src/domain/secrets.js";
import { insertOrg } from "../store/helpers.js";
import { runCommand } from "./run-command.js";
import { storePerTest } from "./test-store.js";

const A = "aaaaaaaa-2222-4000-8000-00000000000a";
const B = "bbbbbbbb-2222-4000-8000-00000000000b";

storePerTest(test);

async function seededDataDir(): Promise<string> {
  const dataDir = mkdtempSync(join(tmpdir(), "pbx-nodes-"));
  const seed = await openDataStore(process.env, dataDir, { create: true });
  await insertOrg(seed.db, A, "A");
  await insertOrg(seed.db, B, "B");
  await seed.db.destroy();
  return dataDir;
}

test("no node: list says every org runs on the one configured engine", async () => {
  const dataDir = await seededDataDir();
  const listed = await runCommand(NodesList, ["--data-dir", dataDir]);
  assert.is(listed.code, 0, listed.stderr + String(listed.error));
  assert.match(listed.stdout, /no engine node defined: every org runs on the one engine/);
});

test("add, list with counts, update, drain, remove; the secret never printed", async () => {
  const dataDir = await seededDataDir();
  const secretFile = join(dataDir, "node-1.secret");
  writeFileSync(secretFile, "Node1-Secret\n");
  const common = ["--ami-host", "10.0.0.11", "--ami-user", "pbxctl", "--data-dir", dataDir];

  const tooSmall = await runCommand(NodesAdd, [
    "node-1",
    ...common,
    "--ami-secret-file",
    secretFile,
    "--sip-address",
    "10.0.0.11:5060",
    "--capacity",
    "1",
  ]);
  assert.is(tooSmall.code, 1);
  assert.is(
    tooSmall.error?.message,
    "Engine node 'node-1' has room for 1 organizations; the first node takes every existing one (2)",
  );

  const added = await runCommand(NodesAdd, [
    "node-1",
    ...common,
    "--ami-secret-file",
    secretFile,
    "--sip-address",
    "10.0.0.11:5060",
    "--capacity",
    "10",
  ]);
  assert.is(added.code, 0, added.stderr + String(added.error));
  assert.not.match(added.stdout, /Node1-Secret/);
  const second = await runCommand(NodesAdd, [
    "node-2",
    ...common,
    "--ami-secret",
    "Node2-Secret",
    "--sip-address",
    "10.0.0.12",
    "--capacity",
    "5",
  ]);
  assert.is(second.code, 0, second.stderr + String(second.error));

  const listed = await runCommand(NodesList, ["--data-dir", dataDir, "--json"]);
  const nodes = (listed.result as NodesListResult).nodes;
  assert.equal(
    nodes.map((n) => [n.name, n.orgs, n.capacity, n.state]),
    [
      ["node-1", 2, 10, "active"],
      ["node-2", 0, 5, "active"],
    ],
  );
  assert.not.match(JSON.stringify(nodes), /Secret/);
  const text = await runCommand(NodesList, ["--data-dir", dataDir]);
  assert.match(text.stdout, /node-1\s+active\s+2\/10 orgs/);

  const store = await openDataStore(process.env, dataDir, { create: false });
  try {
    const row = await store.db
      .selectFrom("engine_nodes")
      .selectAll()
      .where("name", "=", "node-1")
      .executeTakeFirstOrThrow();
    assert.is(decrypt(row.ami_secret_sealed, store.serverKey), "Node1-Secret");
  } finally {
    await store.db.destroy();
  }

  const updated = await runCommand(NodesUpdate, [
    "node-2",
    "--capacity",
    "20",
    "--rename",
    "node-b",
    "--data-dir",
    dataDir,
  ]);
  assert.is(updated.code, 0, updated.stderr + String(updated.error));
  assert.match(updated.stdout, /node-b\s+active\s+0\/20 orgs/);
  const shrink = await runCommand(NodesUpdate, [
    "node-1",
    "--capacity",
    "1",
    "--data-dir",
    dataDir,
  ]);
  assert.is(
    shrink.error?.message,
    "Engine node 'node-1' holds 2 organizations: its capacity cannot be below that",
  );
  const nothing = await runCommand(NodesUpdate, ["node-1", "--data-dir", dataDir]);
  assert.is(nothing.error?.message, "nothing to change: give at least one flag (see --help)");
  const badAddress = await runCommand(NodesUpdate, [
    "node-1",
    "--sip-address",
    "10.0.0.1;transport=tcp",
    "--data-dir",
    dataDir,
  ]);
  assert.match(badAddress.error?.message ?? "", /^sip_address must be host or host:port/);

  const pinned = await runCommand(NodesPin, [
    A,
    "node-b",
    "--standby",
    "node-1",
    "--data-dir",
    dataDir,
  ]);
  assert.is(pinned.code, 0, pinned.stderr + String(pinned.error));
  assert.match(pinned.stdout, /on node-b \(standby node-1\)/);
  const moved = await runCommand(NodesPin, [
    A,
    "node-1",
    "--clear-standby",
    "--json",
    "--data-dir",
    dataDir,
  ]);
  const back = moved.result as NodesPinResult;
  assert.equal([back.org_id, back.node, back.standby_node, back.pinned], [A, "node-1", null, true]);
  const noOrg = await runCommand(NodesPin, ["nope", "node-1", "--data-dir", dataDir]);
  assert.is(noOrg.error?.message, "Organization nope not found");

  const drained = await runCommand(NodesDrain, ["node-1", "--data-dir", dataDir]);
  assert.match(drained.stdout, /node-1\s+draining\s+2\/10 orgs/);

  const refused = await runCommand(NodesRemove, ["node-1", "--data-dir", dataDir]);
  assert.is(
    refused.error?.message,
    "Engine node 'node-1' still holds 2 organizations (primary or standby): place them elsewhere first",
  );
  const removed = await runCommand(NodesRemove, ["node-b", "--data-dir", dataDir]);
  assert.is(removed.code, 0, removed.stderr + String(removed.error));
  const missing = await runCommand(NodesRemove, ["node-b", "--data-dir", dataDir]);
  assert.is(missing.error?.message, "Engine node not found");
});

test.run();
