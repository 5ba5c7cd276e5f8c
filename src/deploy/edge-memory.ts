// The Kamailio edge's shared memory, read over its JSON-RPC (`core.shmmem`) for the metrics.
// Shared memory is where the edge keeps its transactions: every stateful INVITE holds some until
// tm's wait timer after its final answer, and a full pool makes the edge answer 500 to everything
// (issue 26: 64 MB filled at ~5,000 INVITEs/s; `edge init` now prints `-m 256`). So its free
// share is what to alert on before it happens (docs/metrics.md, PbxEdgeSharedMemoryLow).
import { type EdgeRpc, EdgeRpcError } from "./edge-apply.js";

/** The edge's shared memory pool, in bytes, as `core.shmmem` reports it. */
export interface EdgeSharedMemory {
  /** The pool's size (`-m`). */
  total: number;
  /** What the allocator can still hand out. */
  free: number;
  /** The most ever held (the allocator's overhead included) since the edge started: sizes `-m`. */
  maxUsed: number;
}

const FIELDS = {
  total: "total",
  free: "free",
  maxUsed: "max_used",
} as const satisfies Record<keyof EdgeSharedMemory, string>;

/** Reads the pool's figures; rejects (EdgeRpcError) when the edge is away or answers otherwise. */
export async function readEdgeSharedMemory(rpc: EdgeRpc): Promise<EdgeSharedMemory> {
  const answer = (await rpc("core.shmmem")) as Record<string, unknown> | null;
  const figures = {} as EdgeSharedMemory;
  for (const [key, field] of Object.entries(FIELDS) as [keyof EdgeSharedMemory, string][]) {
    const value = answer?.[field];
    if (typeof value !== "number" || !Number.isFinite(value) || value < 0) {
      throw new EdgeRpcError(
        `edge RPC core.shmmem: no ${field} figure in ${JSON.stringify(answer)}`,
      );
    }
    figures[key] = value;
  }
  return figures;
}
