// `/metrics` in the Prometheus text format: on the API port for the admin's bearer token, and on
// PBX_METRICS_LISTEN (no auth: bind it to an address only the scraper reaches) when set.
import { createServer, type Server } from "node:http";
import type { Context, Next } from "koa";
import { authenticate } from "../domain/access/authentication.js";
import { Forbidden } from "../domain/errors.js";
import type { Metrics } from "../metrics/registry.js";
import { credentialsOf } from "./authorize.js";
import type { AppDeps } from "./deps.js";

export const METRICS_PATH = "/metrics";

/** The API port's `/metrics`: the admin only (an org's credentials are refused). */
export function adminMetrics(metrics: Metrics, deps: AppDeps) {
  return async (ctx: Context, next: Next): Promise<void> => {
    if (ctx.path !== METRICS_PATH || ctx.method !== "GET") return next();
    const principal = await authenticate(deps, credentialsOf(ctx), "org");
    if (principal.kind !== "admin") throw new Forbidden("Admin access required");
    ctx.type = metrics.contentType;
    ctx.body = await metrics.scrape();
  };
}

/** A bare HTTP server answering only GET /metrics (PBX_METRICS_LISTEN). */
export async function listenForMetrics(
  metrics: Metrics,
  address: { host: string; port: number },
): Promise<Server> {
  const server = createServer((req, res) => {
    const path = (req.url ?? "").split("?")[0];
    if (path !== METRICS_PATH || (req.method !== "GET" && req.method !== "HEAD")) {
      res.writeHead(404, { "content-type": "application/json" }).end('{"error":"Not found"}');
      return;
    }
    metrics.scrape().then(
      (text) => {
        res.writeHead(200, { "content-type": metrics.contentType });
        res.end(req.method === "HEAD" ? undefined : text);
      },
      () =>
        res
          .writeHead(500, { "content-type": "application/json" })
          .end('{"error":"Internal server error"}'),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(address.port, address.host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  return server;
}
