// `pbxctl edge init|apply` over the server's store: the edge's files from the nodes and
// placements `pbxctl nodes` manages, refusals without --force, and a precise failure when the
// running edge cannot be reached (the run-time path itself is proven in test/cluster).
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import EdgeApply from "../../src/cli/commands/edge/apply.js";
import EdgeInit, { type EdgeInitResult } from "../../src/cli/commands/edge/init.js";
import NodesPin from "../../src/cli/commands/nodes/pin.js";
import { openDataStore } from "../../src/domain/config/gitops.js";
import { insertDid } from "../integration/helpers.js";
import { insertOrg } from "../store/helpers.js";
import { addEngineNode } from "./engine-nodes.js";
import { runCommand } from "./run-command.js";
import { storePerTest } from "./test-store.js";

const A = "aaaaaaaa-2626-4000-8000-00000000000a";
const B = "bbbbbbbb-2626-4000-8000-00000000000b";

storePerTest(test);

/** A store with orgs A (DID +918065978001) and B on two nodes, B pinned to node-2. */
async function twoNodeDataDir(): Promise<string> {
  const dataDir = mkdtempSync(join(tmpdir(), "pbx-edge-cli-"));
  const seed = await openDataStore(process.env, dataDir, { create: true });
  await insertOrg(seed.db, A, "A");
  await insertOrg(seed.db, B, "B");
  await insertDid(seed.db, B, "+918065978011");
  await seed.db.destroy();
  for (const [name, address] of [
    ["node-1", "127.0.0.11:5060"],
    ["node-2", "127.0.0.12:5060"],
  ] as const) {
    await addEngineNode(dataDir, name, address);
  }
  const pinned = await runCommand(NodesPin, [
    B,
    "node-2",
    "--standby",
    "node-1",
    "--data-dir",
    dataDir,
  ]);
  assert.is(pinned.code, 0, pinned.stderr + String(pinned.error));
  return dataDir;
}

test("edge init writes kamailio.cfg and the tables of the store's nodes and placements", async () => {
  const dataDir = await twoNodeDataDir();
  const dir = join(dataDir, "edge");
  const args = ["--dir", dir, "--sip-address", "127.0.0.10", "--data-dir", dataDir];
  const init = await runCommand(EdgeInit, [...args, "--carrier", "203.0.113.0/24"]);
  assert.is(init.code, 0, init.stderr + String(init.error));
  const result = init.result as EdgeInitResult;
  assert.equal(
    { nodes: result.nodes, orgs: result.orgs, dids: result.dids, carriers: result.carriers },
    { nodes: 2, orgs: 2, dids: 3, carriers: 1 },
  );
  assert.match(init.stdout, `start it with: kamailio -f ${dir}/kamailio.cfg -x tlsf -m 256\n`);
  assert.match(
    readFileSync(join(dir, "db/edge_orgs"), "utf8"),
    `org_${A}_:0:0:1:0\n2:org_${B}_:0:0:2,1:0`,
  );
  assert.match(readFileSync(join(dir, "db/edge_dids"), "utf8"), `:+918065978011:0:0:org_${B}_:0`);
  assert.match(
    readFileSync(join(dir, "dispatcher.list"), "utf8"),
    "2 sip:127.0.0.12:5060 0 0 node=node-2",
  );
  assert.match(readFileSync(join(dir, "db/address"), "utf8"), "1:1:203.0.113.0:24:0:carrier");
  assert.match(readFileSync(join(dir, "kamailio.cfg"), "utf8"), `text://${dir}/db`);

  const again = await runCommand(EdgeInit, args);
  assert.is(again.code, 1);
  assert.match(again.error?.message ?? "", "already exist: pass --force to overwrite");
  const forced = await runCommand(EdgeInit, [...args, "--force"]);
  assert.is(forced.code, 0, forced.stderr + String(forced.error));

  if (spawnSync("/usr/sbin/kamailio", ["-v"]).status === 0) {
    const check = spawnSync("/usr/sbin/kamailio", ["-c", "-f", join(dir, "kamailio.cfg")], {
      encoding: "utf8",
    });
    assert.is(check.status, 0, check.stderr);
  }
});

test("edge init refuses a listen address that is not an IP address", async () => {
  const dataDir = await twoNodeDataDir();
  const init = await runCommand(EdgeInit, [
    ...["--dir", join(dataDir, "edge"), "--sip-address", "edge.example", "--data-dir", dataDir],
  ]);
  assert.is(init.code, 1);
  assert.is(init.error?.message, "edge SIP address edge.example is not an IP address");
});

test("edge apply says precisely when the running edge cannot be reached", async () => {
  const dataDir = await twoNodeDataDir();
  const apply = await runCommand(EdgeApply, [
    ...["--dir", join(dataDir, "edge"), "--rpc-port", "1", "--data-dir", dataDir],
  ]);
  assert.is(apply.code, 1);
  assert.match(
    apply.error?.message ?? "",
    /^edge RPC dispatcher\.list at http:\/\/127\.0\.0\.1:1\/RPC: /,
  );
});

test.run();
