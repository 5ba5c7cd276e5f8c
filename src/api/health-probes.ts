// The load balancer's and orchestrator's probes, beside `/health` (whose body stays as it is):
// `GET /health/live` answers while the process does; `GET /health/ready` answers 200 only when
// it should get traffic (src/api/readiness.ts), else 503 with what is wrong.
import type { Context, Next } from "koa";
import type { Readiness } from "./readiness.js";

export const LIVE_PATH = "/health/live";
export const READY_PATH = "/health/ready";

export function healthProbes(readiness: Readiness) {
  return async (ctx: Context, next: Next): Promise<void> => {
    if (ctx.method !== "GET") return next();
    if (ctx.path === LIVE_PATH) {
      ctx.body = { status: "ok" };
      return;
    }
    if (ctx.path !== READY_PATH) return next();
    const { ready, ...checks } = await readiness.check();
    ctx.status = ready ? 200 : 503;
    ctx.body = { status: ready ? "ready" : "not ready", ...checks };
  };
}
