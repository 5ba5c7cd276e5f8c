// Kamailio's reload rate limit, waited out instead of surfaced (docs/beyond-one-machine.md
// "Kamailio rate-limits reloads"). `dispatcher.reload` and `permissions.addressReload` are refused
// with a 500 `Ongoing reload` (dispatcher) or `ongoing reload` (permissions) while the module's
// last RPC reload is less than its `reload_delta` old: Kamailio 5.6's dispatcher_rpc_reload and
// permissions' rpc_check_reload test `last > time(NULL) - reload_delta`, in whole seconds, with
// `last` taken as a reload starts. Whoever reloaded last, the window a refusal was met in has
// therefore ended `reload_delta` seconds later at the latest: one wait of that (plus a margin for
// timer slack) lets the retry in, unless someone else reloads meanwhile (another `edge apply`, a
// replica's push), which the second and last retry covers. Any other refusal is an answer, not a
// wait: it fails at once. `applyEdgeTables` calls its reloads through here, so `edge apply`,
// `deploy --nodes` and `serve`'s edge sync all take a rate-limited reload the same way.
import { systemTimers, type Timers } from "../clock.js";
import { EDGE_RELOAD_DELTA_S } from "../compiler/edge/index.js";
import { type EdgeRpc, EdgeRpcError } from "./edge-rpc.js";

/** Retries after a rate-limited refusal; the first normally suffices (see above). */
export const EDGE_RELOAD_RETRIES = 2;
/** Waited beyond the edge's reload_delta, so a timer firing on the dot is not refused again. */
export const EDGE_RELOAD_MARGIN_MS = 250;
/** How long a refused reload waits before it is tried again. */
export const EDGE_RELOAD_WAIT_MS = EDGE_RELOAD_DELTA_S * 1000 + EDGE_RELOAD_MARGIN_MS;

export type EdgeReloadMethod = "dispatcher.reload" | "permissions.addressReload";

export interface EdgeReloadOptions {
  /** The waits run on these (tests drive a fake; nothing sleeps). Default: the real timers. */
  timers?: Timers;
  /** Abandons a wait (a stopping server): the reload rejects with the signal's reason. */
  signal?: AbortSignal;
  /** Runs after each wait, before the retry; the edge sync checks its lease here. */
  beforeRetry?: () => Promise<void>;
  /** Told of each wait, so a command can say why it pauses and a server can log it. */
  onWait?: (wait: { method: EdgeReloadMethod; ms: number; retry: number }) => void;
}

/** True for Kamailio's rate-limit refusal (either module's spelling), nothing else. */
export function isReloadRateLimited(error: unknown): boolean {
  return (
    error instanceof EdgeRpcError &&
    error.fault?.code === 500 &&
    error.fault.message.trim().toLowerCase() === "ongoing reload"
  );
}

/** One reload RPC; a rate-limited refusal is retried after the edge's reload_delta, bounded. */
export async function reloadEdge(
  rpc: EdgeRpc,
  method: EdgeReloadMethod,
  options: EdgeReloadOptions = {},
): Promise<void> {
  const timers = options.timers ?? systemTimers;
  for (let retry = 0; ; retry++) {
    try {
      await rpc(method);
      return;
    } catch (error) {
      if (!isReloadRateLimited(error)) throw error;
      if (retry === EDGE_RELOAD_RETRIES) {
        throw new EdgeRpcError(
          `${(error as Error).message} (still refused after ${EDGE_RELOAD_RETRIES} retries ${EDGE_RELOAD_WAIT_MS / 1000} s apart: something else reloads the edge that often)`,
          (error as EdgeRpcError).fault,
        );
      }
    }
    options.onWait?.({ method, ms: EDGE_RELOAD_WAIT_MS, retry: retry + 1 });
    await wait(timers, EDGE_RELOAD_WAIT_MS, options.signal);
    await options.beforeRetry?.();
  }
}

function wait(timers: Timers, ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const onAbort = () => {
      timer.cancel();
      reject(signal?.reason);
    };
    const timer = timers.setTimer(ms, () => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    });
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}
