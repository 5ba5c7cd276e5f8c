// Turns route definitions into Koa routes: auth, then validation of params, query and body, then
// the handler, then the reply.
import Router from "@koa/router";
import type { Context, Middleware } from "koa";
import { BadRequest } from "../domain/errors.js";
import { withGenerationPerRequest } from "../store/store-generation.js";
import { createAuditHook } from "./audit-hook.js";
import { authorizeRoute } from "./authorize.js";
import type { AppDeps } from "./deps.js";
import { PageOf, paginate, TOTAL_HEADER } from "./pagination.js";
import { Reply, type RouteDefinition } from "./registry.js";
import { assertJsonBody, assertWellFormedText } from "./request-body.js";
import { isUnchangingListing, JSON_CONTENT_TYPE, serializedPage } from "./serialized-pages.js";
import { describeValidationErrors, validatorOnFirstUse } from "./validation.js";

export const API_PREFIX = "/api/v1";

/** `/organizations/{id}` -> `/api/v1/organizations/:id`. */
export function koaPath(path: string): string {
  return API_PREFIX + path.replace(/\{([A-Za-z0-9_]+)\}/g, ":$1");
}

/** Static segments sort before parameters, so `/organizations/requests` wins over `/{id}`. */
function specificityKey(route: RouteDefinition): string {
  return route.path
    .split("/")
    .map((segment) => (segment.startsWith("{") ? "\uffff" : segment))
    .join("/");
}

/** Lowest 2xx status a route declares (its default success status). */
export function successStatus(route: RouteDefinition): number {
  const statuses = Object.keys(route.responses)
    .map(Number)
    .filter((s) => s >= 200 && s < 300)
    .sort((a, b) => a - b);
  return statuses[0] ?? 200;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Path parameters with UUIDs in lower case: ids are stored so, and UUIDs ignore case (RFC 9562). */
function lowerCaseUuids(params: Record<string, string>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(params).map(([name, value]) => [
      name,
      UUID.test(value) ? value.toLowerCase() : value,
    ]),
  );
}

function makeHandler(
  route: RouteDefinition,
  deps: AppDeps,
  audit: ReturnType<typeof createAuditHook>,
) {
  const validate = {
    params: route.params && validatorOnFirstUse(route.params, "params"),
    query: route.query && validatorOnFirstUse(route.query, "query"),
    body: route.body && validatorOnFirstUse(route.body, "body"),
  };
  const status = successStatus(route);

  return async (ctx: Context & { params: Record<string, string> }) => {
    // One reading of the store's generation for the request's cached reads (its credential, its
    // listing) instead of one each (store-generation.ts says why answers stay current).
    const requestDeps: AppDeps = { ...deps, db: withGenerationPerRequest(deps.db) };
    const principal = await authorizeRoute(route, ctx, requestDeps);
    const params = lowerCaseUuids(ctx.params);
    if (validate.params && !validate.params(params)) {
      throw new BadRequest(describeValidationErrors(validate.params.errors, "path"));
    }
    // On org routes `org_id` names the internal key's org: a credential, not a route parameter.
    const { org_id: _orgId, ...withoutOrgId } = ctx.query as Record<string, unknown>;
    const query = route.authKinds.includes("org") ? withoutOrgId : { ...ctx.query };
    if (validate.query && !validate.query(query)) {
      throw new BadRequest(describeValidationErrors(validate.query.errors, "query"));
    }
    let body: unknown = (ctx.request as { body?: unknown }).body;
    if (validate.body) {
      assertJsonBody(ctx);
      assertWellFormedText(body);
      if (body === undefined) body = {};
      if (!validate.body(body)) {
        throw new BadRequest(
          route.bodyError ?? describeValidationErrors(validate.body.errors, "body"),
        );
      }
    }
    // Mutations append their audit record (audit-hook.ts); handlers see the audit's deps.
    let result = await audit.around(route, { params, principal, ctx }, requestDeps, (handlerDeps) =>
      route.handler({ params, query, body, principal, deps: handlerDeps, ctx }),
    );
    if (route.list && isUnchangingListing(result)) {
      // An unchanged listing's page: the bytes serialized by an earlier request.
      const page = serializedPage(result, query as { limit?: number; offset?: number }, route.list);
      ctx.set(TOTAL_HEADER, page.total);
      ctx.set("Content-Type", JSON_CONTENT_TYPE);
      ctx.status = status;
      ctx.body = page.bytes;
      return;
    }
    if (route.list && (Array.isArray(result) || result instanceof PageOf)) {
      const page = paginate(result, query as { limit?: number; offset?: number }, route.list);
      ctx.set(TOTAL_HEADER, String(page.total));
      result = page.body;
    }
    if (result instanceof Reply) {
      ctx.status = result.status;
      for (const [name, value] of Object.entries(result.headers)) ctx.set(name, value);
      if (result.body !== undefined) ctx.body = result.body;
      return;
    }
    ctx.status = status;
    if (status !== 204 && result !== undefined) ctx.body = result;
  };
}

/** The first segment under /api/v1 of `path`, in lower case (routes ignore case); null when none. */
function firstSegment(path: string): string | null {
  if (path.length <= API_PREFIX.length + 1 || path[API_PREFIX.length] !== "/") return null;
  if (path.slice(0, API_PREFIX.length).toLowerCase() !== API_PREFIX) return null;
  const end = path.indexOf("/", API_PREFIX.length + 1);
  return path.slice(API_PREFIX.length + 1, end === -1 ? undefined : end).toLowerCase();
}

/** The route definitions' first path segment (`/users/{id}` -> `users`); never a parameter. */
function segmentOf(route: RouteDefinition): string {
  const segment = route.path.split("/")[1] ?? "";
  if (segment === "" || segment.includes("{")) {
    throw new Error(`route ${route.path} must start with a fixed segment`);
  }
  return segment.toLowerCase();
}

/** Every route under /api/v1: `routes()` answers them, `allowedMethods()` the 405s and OPTIONS. */
export interface ApiRouter {
  routes(): Middleware;
  allowedMethods(): Middleware;
}

/**
 * A router holding every route under /api/v1: one @koa/router per first path segment, picked
 * by a map lookup. A single router tests every route's pattern on every request (150 regular
 * expressions for a GET /users); every route sharing a path shares its first segment, so each
 * request still meets all the routes that could match it, in the same order.
 */
export function buildRouter(routes: readonly RouteDefinition[], deps: AppDeps): ApiRouter {
  const ordered = [...routes].sort((a, b) =>
    specificityKey(a) < specificityKey(b) ? -1 : specificityKey(a) > specificityKey(b) ? 1 : 0,
  );
  const seen = new Set<string>();
  const audit = createAuditHook(routes, deps);
  const bySegment = new Map<string, Router>();
  for (const route of ordered) {
    const key = `${route.method.toUpperCase()} ${route.path}`;
    if (seen.has(key)) throw new Error(`route defined twice: ${key}`);
    seen.add(key);
    const segment = segmentOf(route);
    let router = bySegment.get(segment);
    if (!router) {
      router = new Router();
      bySegment.set(segment, router);
    }
    router[route.method](koaPath(route.path), makeHandler(route, deps, audit));
  }
  const middlewares = (make: (router: Router) => Middleware): Middleware => {
    const bySegmentMiddleware = new Map(
      [...bySegment].map(([segment, router]) => [segment, make(router)]),
    );
    return (ctx, next) => {
      const segment = firstSegment(ctx.path);
      const middleware = segment === null ? undefined : bySegmentMiddleware.get(segment);
      return middleware ? middleware(ctx, next) : next();
    };
  };
  return {
    routes: () => middlewares((router) => router.routes() as unknown as Middleware),
    allowedMethods: () => middlewares((router) => router.allowedMethods() as unknown as Middleware),
  };
}
