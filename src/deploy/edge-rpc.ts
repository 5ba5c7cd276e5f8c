// How pbxctl talks to the running Kamailio edge: JSON-RPC over HTTP (jsonrpcs + xhttp at `/RPC`,
// loopback in the generated config), one call at a time. A refusal keeps the edge's own fault
// (code and message) beside the readable text, so a caller can tell one refusal from another
// (src/deploy/edge-reload.ts waits out Kamailio's reload rate limit) without parsing prose.

/** One JSON-RPC call to the edge; rejects with the edge's error message. */
export type EdgeRpc = (method: string, params?: readonly unknown[]) => Promise<unknown>;

/** The edge's JSON-RPC error object, as it answered it. */
export interface EdgeRpcFault {
  code: number | null;
  message: string;
}

export class EdgeRpcError extends Error {
  override readonly name = "EdgeRpcError";

  /** `fault`: what the edge answered; absent when it did not answer (down, no JSON). */
  constructor(
    message: string,
    readonly fault?: EdgeRpcFault,
  ) {
    super(message);
  }
}

/** JSON-RPC over HTTP to Kamailio's jsonrpcs (xhttp, `/RPC`; loopback in the generated config). */
export function httpEdgeRpc(url: string, timeoutMs = 5000): EdgeRpc {
  let id = 0;
  return async (method, params = []) => {
    id += 1;
    let response: Response;
    try {
      response = await fetch(url, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ jsonrpc: "2.0", method, params, id }),
        signal: AbortSignal.timeout(timeoutMs),
      });
    } catch (error) {
      throw new EdgeRpcError(`edge RPC ${method} at ${url}: ${(error as Error).message}`);
    }
    const body = (await response.json().catch(() => null)) as {
      result?: unknown;
      error?: { code?: number; message?: string };
    } | null;
    if (body === null) throw new EdgeRpcError(`edge RPC ${method}: no JSON answer`);
    if (body.error) {
      const fault = { code: body.error.code ?? null, message: body.error.message ?? "error" };
      throw new EdgeRpcError(`edge RPC ${method}: ${fault.code ?? "?"} ${fault.message}`, fault);
    }
    return body.result;
  };
}
