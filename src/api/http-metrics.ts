// Measures every request: in flight, and its duration by route template, method and status
// class. The route is @koa/router's matched layer path (`/api/v1/users/:id`) or one of the fixed
// paths the app answers outside the router; anything else is `unmatched`, so a URL (and the ids
// or numbers in it) never becomes a label.
import type { Context, Next } from "koa";
import type { HttpInstruments } from "../metrics/instruments.js";

export const UNMATCHED_ROUTE = "unmatched";

/** What to call a request no router layer matched: its path when it is fixed, else a group. */
export function fixedRouteNamer(
  paths: readonly string[],
  prefixes: readonly string[],
): (path: string) => string {
  const fixed = new Set(paths);
  return (path) => {
    if (fixed.has(path)) return path;
    for (const prefix of prefixes) if (path.startsWith(prefix)) return `${prefix}*`;
    return UNMATCHED_ROUTE;
  };
}

/** The middleware; outermost, so it sees the status the error middleware set. */
export function httpMetrics(instruments: HttpInstruments, nameFixed: (path: string) => string) {
  return async (ctx: Context, next: Next): Promise<void> => {
    const started = process.hrtime.bigint();
    instruments.started();
    try {
      await next();
    } finally {
      const matched = (ctx as { _matchedRoute?: unknown })._matchedRoute;
      instruments.finished(
        typeof matched === "string" ? matched : nameFixed(ctx.path),
        ctx.method,
        ctx.status,
        Number(process.hrtime.bigint() - started) / 1e9,
      );
    }
  };
}
