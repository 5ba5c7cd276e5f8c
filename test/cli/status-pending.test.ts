// `pbxctl status`'s list of realtime PJSIP objects an engine has not taken yet: with no engine node
// one line each, as before; with nodes, under the node that owes them, since the same object is
// owed once by every node holding its org. (The command over a real store: the no-node case in
// test/integration/realtime-pjsip.test.ts, two nodes in test/deploy/node-realtime.test.ts.)
import { test } from "uvu";
import * as assert from "uvu/assert";
import { type PendingPjsipStatus, pendingPjsipLines } from "../../src/cli/commands/status.js";

const AT = "2026-03-01T10:00:00.000Z";

function owed(
  kind: PendingPjsipStatus["kind"],
  id: string,
  nodeId: string,
  node?: string | null,
): PendingPjsipStatus {
  return {
    nodeId,
    kind,
    id,
    orgId: "0b9a3c1e-3333-4333-8333-000000000001",
    seq: 1,
    queuedAt: AT,
    ...(node === undefined ? {} : { node }),
  };
}

test("nothing owed: no lines", () => {
  assert.equal(pendingPjsipLines([]), []);
});

test("no engine node: one line per object, unchanged", () => {
  assert.equal(
    pendingPjsipLines([owed("endpoint", "acme_100", ""), owed("auth", "acme_100", "")]),
    [
      "PJSIP objects the engine has not taken yet (2):",
      `  endpoint acme_100 (saved ${AT})`,
      `  auth acme_100 (saved ${AT})`,
    ],
  );
});

test("one node: its objects under its name", () => {
  assert.equal(pendingPjsipLines([owed("endpoint", "acme_100", "n1", "node-1")]), [
    "PJSIP objects the engines have not taken yet (1):",
    "  node node-1 (1):",
    `    endpoint acme_100 (saved ${AT})`,
  ]);
});

test("two nodes: the same object under each node that owes it; engines no node names last", () => {
  const lines = pendingPjsipLines([
    owed("endpoint", "acme_100", "n2", "node-2"),
    owed("endpoint", "acme_100", "n1", "node-1"),
    owed("auth", "acme_100", "n1", "node-1"),
    owed("aor", "beta_200", "gone", null),
    owed("aor", "acme_101", "", null),
  ]);
  assert.equal(lines, [
    "PJSIP objects the engines have not taken yet (5):",
    "  node node-1 (2):",
    `    endpoint acme_100 (saved ${AT})`,
    `    auth acme_100 (saved ${AT})`,
    "  node node-2 (1):",
    `    endpoint acme_100 (saved ${AT})`,
    "  the implicit engine (no node) (1):",
    `    aor acme_101 (saved ${AT})`,
    "  node id gone (no longer defined) (1):",
    `    aor beta_200 (saved ${AT})`,
  ]);
});

test.run();
