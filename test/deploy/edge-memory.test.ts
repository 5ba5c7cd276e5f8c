// The edge's shared memory from `core.shmmem` (src/deploy/edge-memory.ts): the real answer's
// figures, and a refusal (never a made-up figure) for an answer without them.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { EdgeRpcError } from "../../src/deploy/edge-apply.js";
import { readEdgeSharedMemory } from "../../src/deploy/edge-memory.js";
import { createMetrics } from "../../src/metrics/registry.js";
import { Scrape } from "../metrics/scrape.js";
import { REAL_SHMMEM } from "./fake-edge.js";

test("the figures of a real edge's answer", async () => {
  const asked: string[] = [];
  const figures = await readEdgeSharedMemory(async (method) => {
    asked.push(method);
    return REAL_SHMMEM;
  });
  assert.equal(asked, ["core.shmmem"]);
  assert.equal(figures, {
    total: REAL_SHMMEM.total,
    free: REAL_SHMMEM.free,
    maxUsed: REAL_SHMMEM.max_used,
  });
});

test("an answer without a figure is refused, naming it", async () => {
  for (const answer of [null, "Ok", { ...REAL_SHMMEM, free: "12" }, { total: 1, free: 1 }]) {
    const refused = await readEdgeSharedMemory(async () => answer).then(
      () => null,
      (error: Error) => error,
    );
    assert.instance(refused, EdgeRpcError, JSON.stringify(answer));
    assert.match(refused!.message, /^edge RPC core\.shmmem: no (free|total|max_used) figure/);
  }
});

test("no edge: the metric has no series, never a 0 an alert would fire on", async () => {
  const scrape = new Scrape(await createMetrics().scrape());
  assert.not.ok(scrape.has("pbx_edge_shm_bytes"));
  assert.match(scrape.text, "# TYPE pbx_edge_shm_bytes gauge");
});

test.run();
