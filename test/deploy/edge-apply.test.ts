// applyEdgeTables against an in-memory edge that answers Kamailio's JSON-RPC methods as Kamailio
// 5.6 does (shapes recorded from the cluster suite's real edge): only differing keys are sent,
// reloads only when nodes or carriers differ, and nothing counts as applied unless read back.
import { mkdirSync, mkdtempSync, readFileSync, statSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import {
  buildEdgeTables,
  EDGE_DATA_FILES,
  type EdgeState,
  printEdgeData,
} from "../../src/compiler/edge/index.js";
import {
  applyEdgeTables,
  EdgeNotApplied,
  type EdgeRpc,
  EdgeRpcError,
  httpEdgeRpc,
} from "../../src/deploy/edge-apply.js";
import { EDGE_LISTEN, startFakeEdge } from "./fake-edge.js";

function tablesOf(state: Omit<EdgeState, "listen">) {
  return buildEdgeTables({ ...state, listen: EDGE_LISTEN }, []);
}

const TWO_NODES: Omit<EdgeState, "listen"> = {
  nodes: [
    { name: "node-1", sip_address: "127.0.0.11", state: "active" },
    { name: "node-2", sip_address: "127.0.0.12", state: "active" },
  ],
  orgs: [
    {
      org_id: "a",
      context_prefix: "org_a_",
      primary: "node-1",
      standby: "node-2",
      dids: ["+918065978001"],
    },
    { org_id: "b", context_prefix: "org_b_", primary: "node-2", standby: null, dids: [] },
  ],
  carriers: ["203.0.113.5", "198.51.100.0/24"],
};

/** An edge holding `loaded`'s tables; `ignoreSets` drops htable.sets (a broken edge). */
function fakeEdge(loaded: ReturnType<typeof tablesOf> | null, ignoreSets = false) {
  const calls: string[] = [];
  const htables = {
    orgs: new Map(loaded?.orgs ?? []),
    dids: new Map(loaded?.dids ?? []),
  } as Record<string, Map<string, string>>;
  let dispatcher = loaded?.dispatcher ?? [];
  let carriers = loaded?.carriers ?? [];
  let next: ReturnType<typeof tablesOf> | null = null;
  const rpc: EdgeRpc = async (method, params = []) => {
    calls.push(params.length > 0 ? `${method} ${params.join(" ")}` : method);
    switch (method) {
      case "htable.dump":
        return [...(htables[String(params[0])] ?? [])].map(([name, value], entry) => ({
          entry,
          size: 1,
          slot: [{ name, value, type: "str" }],
        }));
      case "htable.sets":
        if (!ignoreSets) htables[String(params[0])]?.set(String(params[1]), String(params[2]));
        return "Ok. Key set to new value.";
      case "htable.delete":
        htables[String(params[0])]?.delete(String(params[1]));
        return "Ok. Key deleted.";
      case "dispatcher.list":
        if (dispatcher.length === 0)
          throw new EdgeRpcError(`edge RPC ${method}: 500 No Destination Sets`);
        return {
          NRSETS: dispatcher.length,
          RECORDS: dispatcher.map((entry) => ({
            SET: {
              ID: entry.set,
              TARGETS: [
                {
                  DEST: {
                    URI: entry.uri,
                    FLAGS: entry.flags === 4 ? "DX" : "AP",
                    ATTRS: { BODY: `node=${entry.node}` },
                  },
                },
              ],
            },
          })),
        };
      case "dispatcher.reload":
        dispatcher = next?.dispatcher ?? [];
        return "Ok. Dispatcher successfully reloaded.";
      case "permissions.addressDump":
        return carriers
          .filter((c) => c.mask === 32)
          .map((c) => ({ table: 1, group: 1, item: { ip: c.ip, port: 0, tag: "carrier" } }));
      case "permissions.subnetDump":
        return carriers
          .filter((c) => c.mask !== 32)
          .map((c, id) => ({
            id,
            group: 1,
            item: { ip: c.ip, mask: c.mask, port: 0, tag: "carrier" },
          }));
      case "permissions.addressReload":
        carriers = next?.carriers ?? [];
        return "Reload OK";
      default:
        throw new EdgeRpcError(`edge RPC ${method}: 500 Method Not Found`);
    }
  };
  // What the files now say, as a reload would read them.
  const reloadsFrom = (tables: ReturnType<typeof tablesOf>) => {
    next = tables;
  };
  return { rpc, calls, reloadsFrom };
}

test("only the entries that differ are sent; no reload when nodes and carriers are unchanged", async () => {
  const before = tablesOf(TWO_NODES);
  const after = tablesOf({
    ...TWO_NODES,
    orgs: [
      { ...TWO_NODES.orgs[0]!, dids: [] },
      { ...TWO_NODES.orgs[1]!, dids: ["+918065978001"] },
    ],
  });
  const edge = fakeEdge(before);
  edge.reloadsFrom(after);
  const dir = mkdtempSync(join(tmpdir(), "pbx-edge-apply-"));
  const result = await applyEdgeTables(edge.rpc, dir, after);
  assert.equal(result, {
    orgKeysChanged: 0,
    didKeysChanged: 1,
    dispatcherReloaded: false,
    carriersReloaded: false,
  });
  assert.ok(edge.calls.includes("htable.sets dids +918065978001 org_b_"));
  assert.not.ok(edge.calls.includes("dispatcher.reload"));
  assert.match(readFileSync(join(dir, "db/edge_dids"), "utf8"), "1:+918065978001:0:0:org_b_:0");
});

test("a first apply to an empty edge reloads nodes and carriers and sets every entry", async () => {
  const tables = tablesOf(TWO_NODES);
  const edge = fakeEdge(null);
  edge.reloadsFrom(tables);
  const result = await applyEdgeTables(
    edge.rpc,
    mkdtempSync(join(tmpdir(), "pbx-edge-apply-")),
    tables,
  );
  assert.equal(result, {
    orgKeysChanged: 2,
    didKeysChanged: 1,
    dispatcherReloaded: true,
    carriersReloaded: true,
  });
  // Nodes before the org entries that name their sets.
  assert.ok(
    edge.calls.indexOf("dispatcher.reload") < edge.calls.indexOf("htable.sets orgs org_a_ 1,2"),
  );
});

test("removed entries are deleted, and an edge with no node is an empty list, not an error", async () => {
  const edge = fakeEdge(tablesOf(TWO_NODES));
  const empty = tablesOf({ nodes: [], orgs: [], carriers: [] });
  edge.reloadsFrom(empty);
  const result = await applyEdgeTables(
    edge.rpc,
    mkdtempSync(join(tmpdir(), "pbx-edge-apply-")),
    empty,
  );
  assert.equal(result.orgKeysChanged, 2);
  assert.ok(edge.calls.includes("htable.delete orgs org_b_"));
  assert.ok(result.dispatcherReloaded);
});

test("an edge that does not end up with the compiled tables is not applied", async () => {
  const tables = tablesOf(TWO_NODES);
  const edge = fakeEdge(null, true);
  edge.reloadsFrom(tables);
  try {
    await applyEdgeTables(edge.rpc, mkdtempSync(join(tmpdir(), "pbx-edge-apply-")), tables);
    assert.unreachable("applied without the entries");
  } catch (error) {
    assert.instance(error, EdgeNotApplied);
    assert.is((error as Error).message, "edge table orgs: org_a_ is absent, compiled 1,2");
  }
});

test("a carrier change in the second the edge loaded its address table is still reloaded", async () => {
  // db_text re-reads a table only when its mtime is in a later whole second than the loaded one:
  // the edge started on edge init's files (no carrier) in a second that is not over yet (set
  // ahead here, so the test does not depend on when the second turns), and the first apply
  // brings a carrier.
  const dir = mkdtempSync(join(tmpdir(), "pbx-edge-apply-"));
  for (const file of printEdgeData(tablesOf({ ...TWO_NODES, carriers: [] }))) {
    mkdirSync(join(dir, file.path, ".."), { recursive: true });
    writeFileSync(join(dir, file.path), file.content);
  }
  const address = join(dir, EDGE_DATA_FILES.address);
  const loadedSecond = Math.floor(Date.now() / 1000) + 30;
  utimesSync(address, loadedSecond, loadedSecond);
  const edge = await startFakeEdge(dir);
  try {
    const rpc = httpEdgeRpc(`http://127.0.0.1:${edge.port}/RPC`);
    const tables = tablesOf(TWO_NODES);
    const result = await applyEdgeTables(rpc, dir, tables);
    assert.ok(result.carriersReloaded);
    assert.is(Math.floor(statSync(address).mtimeMs / 1000), loadedSecond + 1);
    // Unchanged carriers leave the file, and its mtime, alone.
    const again = await applyEdgeTables(rpc, dir, tables);
    assert.not.ok(again.carriersReloaded);
    assert.is(Math.floor(statSync(address).mtimeMs / 1000), loadedSecond + 1);
  } finally {
    await edge.close();
  }
});

test("a carrier file the edge missed (rewritten in its loaded second) is reloaded anyway", async () => {
  // Before pbxctl moved the mtime on, a rewrite in the edge's loaded second left the file
  // holding the compiled carriers while the edge kept the old ones: the content is then already
  // right, and the reload must still see a newer file.
  const dir = mkdtempSync(join(tmpdir(), "pbx-edge-apply-"));
  const address = join(dir, EDGE_DATA_FILES.address);
  const loadedSecond = Math.floor(Date.now() / 1000) + 30;
  const writeTables = (tables: ReturnType<typeof tablesOf>) => {
    for (const file of printEdgeData(tables)) {
      mkdirSync(join(dir, file.path, ".."), { recursive: true });
      writeFileSync(join(dir, file.path), file.content);
    }
    utimesSync(address, loadedSecond, loadedSecond);
  };
  writeTables(tablesOf({ ...TWO_NODES, carriers: [] }));
  const edge = await startFakeEdge(dir);
  try {
    const tables = tablesOf(TWO_NODES);
    writeTables(tables);
    const result = await applyEdgeTables(
      httpEdgeRpc(`http://127.0.0.1:${edge.port}/RPC`),
      dir,
      tables,
    );
    assert.ok(result.carriersReloaded);
    assert.is(Math.floor(statSync(address).mtimeMs / 1000), loadedSecond + 1);
  } finally {
    await edge.close();
  }
});

test.run();
