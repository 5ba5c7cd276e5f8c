// The auto-ticket intake's HTTP face (SPEC.md §4.7): `POST {events_url}/auto-ticket/{org_id}`
// answers 202 at once and the intake classifies in the background. `pbxctl serve` mounts it under
// `/events` of the API server; `pbxctl intake serve` runs it alone (same path). Not part of the
// /api/v1 document: it is the intake service's own endpoint, called by the poller. When the
// server has an internal key (PBX_INTERNAL_KEY), the request must carry it in `X-Internal-Key`.
import { timingSafeEqual } from "node:crypto";
import Koa, { type Middleware } from "koa";
import type { Logger } from "pino";
import { BadRequest, Forbidden, Unauthorized } from "../domain/errors.js";
import type { TicketIntake } from "../tickets/intake.js";
import { errorMiddleware } from "./error-middleware.js";
import { intakeCallFromRecord } from "./intake-record.js";
import { jsonBodyParser } from "./request-body.js";
import { securityHeaders } from "./security-headers.js";

/** Where the intake listens, on the API server and alone. */
export const EVENTS_PATH = "/events";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function sameKey(given: string, expected: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

/** Answers `POST <EVENTS_PATH>/auto-ticket/{org_id}`; passes every other request on. */
export function intakeMiddleware(
  intake: TicketIntake,
  options: { internalKey: string | null },
): Middleware {
  const route = new RegExp(`^${EVENTS_PATH}/auto-ticket/([^/]+)$`);
  return async (ctx, next) => {
    const match = route.exec(ctx.path);
    if (!match) return next();
    if (ctx.method !== "POST") {
      ctx.status = 405;
      ctx.set("Allow", "POST");
      ctx.body = { error: "Method not allowed" };
      return;
    }
    if (options.internalKey !== null) {
      const key = ctx.get("x-internal-key");
      if (key === "") throw new Unauthorized("Authentication required");
      if (!sameKey(key, options.internalKey)) throw new Forbidden("Internal key required");
    }
    const orgId = decodeURIComponent(match[1]!);
    if (!UUID.test(orgId)) throw new BadRequest("org_id must be a UUID");
    const call = intakeCallFromRecord((ctx.request as { body?: unknown }).body);
    const { accepted } = await intake.receive(orgId.toLowerCase(), call);
    ctx.status = 202;
    ctx.body = { accepted: true, duplicate: !accepted };
  };
}

/** The intake alone (`pbxctl intake serve`): /health and the intake path. */
export function createIntakeApp(options: {
  intake: TicketIntake;
  internalKey: string | null;
  logger: Logger;
  bodyLimit: string;
}): Koa {
  const app = new Koa({ proxy: false });
  app.silent = true;
  app.use(securityHeaders);
  app.use(errorMiddleware(options.logger));
  app.use(async (ctx, next) => {
    if (ctx.path !== "/health" || ctx.method !== "GET") return next();
    ctx.body = { status: "ok" };
  });
  app.use(jsonBodyParser(options.bodyLimit));
  app.use(intakeMiddleware(options.intake, { internalKey: options.internalKey }));
  app.use((ctx) => {
    ctx.status = 404;
    ctx.body = { error: "Not found" };
  });
  return app;
}
