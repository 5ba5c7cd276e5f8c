// `/health`'s engine with engine nodes: a count of the nodes whose AMI is down, never their names
// (/health needs no authentication).
import { test } from "uvu";
import * as assert from "uvu/assert";
import { nodesEngineHealth } from "../../src/api/engine-health.js";

test("connected while every node is; else how many of how many are down", () => {
  assert.is(nodesEngineHealth(["connected", "connected"]), "connected");
  assert.is(nodesEngineHealth(["connected", "disconnected"]), "disconnected: 1 of 2 nodes");
  assert.is(nodesEngineHealth(["disconnected", "disconnected"]), "disconnected: 2 of 2 nodes");
});

test("files-only nodes (no AMI) count as not down", () => {
  assert.is(nodesEngineHealth(["files-only", "connected"]), "connected");
});

test.run();
