// The audit log's one hook into the API (issue 16): every successful mutation route (POST, PUT,
// PATCH, DELETE, except the few below that change nothing) appends one audit record, without any
// resource module knowing. What the record says is derived from the route declaration:
// - resource and id: the path's first static segment(s) and first parameter (`/users/{id}`), or
//   the `id` of the created row in the answer (`POST /users`);
// - action: create / update / delete by method, or the path's verb (`/ivrs/{id}/publish`);
// - before / after: read through the resource's own GET route at the same path (`GET /users/{id}`
//   for `PUT /users/{id}`), called before and after the handler with the same principal, so the
//   record shows the resource as the API shows it; else the mutation's answer; secrets redacted;
// - whether the change scheduled a deploy of the org: the deploy scheduler handed to handlers
//   notes which orgs it was asked to deploy. Each audited request hands its handler deps with a
//   scheduler of its own; AsyncLocalStorage did this before, but once used it turns on promise
//   hooks for every promise of every request (2-3% of GET /users' CPU, docs/performance.md).
import type { Context } from "koa";
import type { Principal } from "../domain/access/principal.js";
import { actorOf, recordAudit } from "../domain/compliance/audit-log.js";
import type { DeployScheduler } from "../domain/ports.js";
import type { Db } from "../store/database.js";
import { inUnitOfWork } from "../store/unit-of-work.js";
import type { AppDeps } from "./deps.js";
import { Reply, type RouteDefinition } from "./registry.js";

/**
 * Mutations that act outside the store (the engine, a network peer, speech, files) or wait on
 * work that reads the store through its own handle (deploys): they cannot run inside one store
 * transaction (on SQLite it would hold the one connection while they wait, and a deploy they
 * await would wait for it in turn). Their record is appended after they succeed, as its own
 * write. Every other audited mutation runs in a unit of work with its record (issue 28 item 5).
 */
export const AUDITED_AFTER_ACTION = new Set([
  "POST /config/deploy",
  "POST /config/reload",
  "POST /organizations/{id}/regenerate",
  "POST /admin/regenerate-gateway",
  "POST /ivrs/{id}/publish",
  "POST /ivrs/{id}/generate-greeting",
  "POST /greetings",
  "POST /music-on-hold",
  "DELETE /greetings/{name}",
  "DELETE /music-on-hold/{name}",
  "POST /webhooks/{id}/test",
  "POST /webhooks/{id}/deliveries/{deliveryId}/replay",
  "POST /test/call-event",
  "POST /calls/{linkedId}/hangup",
  "POST /calls/click-to-call",
  "POST /calls/originate-to-ai",
  "POST /calls/{linkedId}/transfer",
  "POST /calls/{linkedId}/hold",
  "POST /calls/{linkedId}/unhold",
  "POST /compliance/retention/purge",
  "POST /admin/whatsapp/test-send",
]);

/** Writes that change nothing (a preview, a simulation, a token): never audited. */
export const NOT_AUDITED = new Set([
  "POST /tts/preview",
  "POST /simulate",
  "POST /auth/admin-token",
]);

const PARAM = /^\{([A-Za-z0-9_]+)\}$/;
const shape = (path: string) => path.replace(/\{[A-Za-z0-9_]+\}/g, "{}");

interface PathParts {
  resourceType: string;
  /** Name of the parameter naming the resource, if the path has one. */
  idParam: string | null;
  /** Static segments after the resource (`publish`, `members`), joined with `.`. */
  suffix: string;
}

/**
 * What a route's path says about the resource it changes. Without a parameter, the resource is
 * the longest leading path that has a GET route of its own (`/compliance/consent`, `/settings`)
 * and the rest is the verb (`/compliance/retention/purge`); else the first segment.
 */
export function pathParts(path: string, getPaths: ReadonlySet<string> = new Set()): PathParts {
  const segments = path.split("/").filter((s) => s !== "" && s !== "admin");
  const first = segments.findIndex((s) => PARAM.test(s));
  if (first === -1) {
    let split = 1;
    for (let n = segments.length; n > 1; n--) {
      if (getPaths.has(`/${segments.slice(0, n).join("/")}`)) {
        split = n;
        break;
      }
    }
    return {
      resourceType: segments.slice(0, split).join("/") || "service",
      idParam: null,
      suffix: segments.slice(split).join("."),
    };
  }
  return {
    resourceType: segments.slice(0, first).join("/") || "service",
    idParam: PARAM.exec(segments[first]!)![1]!,
    suffix: segments
      .slice(first + 1)
      .filter((s) => !PARAM.test(s))
      .join("."),
  };
}

const VERBS: Record<string, string> = {
  post: "create",
  put: "update",
  patch: "update",
  delete: "delete",
};

/** The audit action of a route: create/update/delete, or the path's own verb. */
export function actionOf(
  route: Pick<RouteDefinition, "method" | "path">,
  getPaths: ReadonlySet<string> = new Set(),
): string {
  const { suffix } = pathParts(route.path, getPaths);
  const verb = VERBS[route.method] ?? route.method;
  if (suffix === "") return verb;
  return route.method === "post" ? suffix : `${suffix}.${verb}`;
}

function isAudited(route: RouteDefinition): boolean {
  if (route.method === "get" || route.authKinds.includes("public")) return false;
  return !NOT_AUDITED.has(`${route.method.toUpperCase()} ${route.path}`);
}

/** A JSON body worth storing: plain data, not a file or stream. */
function dataOf(result: unknown): unknown {
  const value = result instanceof Reply ? result.body : result;
  if (value === null || value === undefined) return null;
  if (typeof value !== "object") return null;
  if (Buffer.isBuffer(value) || value instanceof Uint8Array) return null;
  if (typeof (value as { pipe?: unknown }).pipe === "function") return null;
  return value;
}

function createdId(result: unknown): string | null {
  const id = (dataOf(result) as { id?: unknown } | null)?.id;
  return typeof id === "string" || typeof id === "number" ? String(id) : null;
}

interface RequestScope {
  deployedOrgs: Set<string>;
}

/** Builds the hook over every route (the GET routes are the readers of before/after). */
export function createAuditHook(routes: readonly RouteDefinition[], deps: AppDeps) {
  const readers = new Map<string, RouteDefinition>();
  // Paths with a GET route, `admin` segments dropped as pathParts drops them.
  const getPaths = new Set(
    routes.filter((r) => r.method === "get").map((r) => r.path.replace(/\/admin(?=\/|$)/g, "")),
  );
  for (const route of routes) {
    // JSON readers only: a file route (greeting audio) would open a file nobody reads.
    const ok = route.responses[200];
    const json = ok !== undefined && !ok.contentType && !ok.contentTypes;
    if (route.method === "get" && json && !route.list && !route.authKinds.includes("public")) {
      readers.set(shape(route.path), route);
    }
  }
  /** The GET route showing this resource, and how to fill its parameters. */
  function readerOf(route: RouteDefinition): RouteDefinition | null {
    const { idParam } = pathParts(route.path, getPaths);
    const candidates: string[] = [];
    if (idParam !== null) {
      candidates.push(shape(route.path));
      candidates.push(
        shape(route.path.slice(0, route.path.indexOf(`{${idParam}}`) + idParam.length + 2)),
      );
    } else if (route.method === "post") {
      candidates.push(`${shape(route.path)}/{}`);
    } else {
      candidates.push(shape(route.path));
    }
    for (const candidate of candidates) {
      const reader = readers.get(candidate);
      if (reader) return reader;
    }
    return null;
  }

  async function read(
    reader: RouteDefinition | null,
    values: string[],
    principal: Principal | null,
    ctx: Context,
    readerDeps: AppDeps,
  ): Promise<unknown> {
    if (!reader) return null;
    const names = [...reader.path.matchAll(/\{([A-Za-z0-9_]+)\}/g)].map((m) => m[1]!);
    if (names.length > values.length) return null;
    const params = Object.fromEntries(names.map((name, i) => [name, values[i]!]));
    try {
      return dataOf(
        await reader.handler({
          params,
          query: {},
          body: undefined,
          principal,
          deps: readerDeps,
          ctx,
        }),
      );
    } catch {
      return null; // gone, or not readable by this principal: nothing to show
    }
  }

  /**
   * Runs `handler` and, when it succeeds on an audited route, appends its audit record: in the
   * same unit of work as the change (a failing record fails the request and undoes the change),
   * or after the action for the routes of AUDITED_AFTER_ACTION.
   */
  async function around<T>(
    route: RouteDefinition,
    request: { params: Record<string, string>; principal: Principal | null; ctx: Context },
    /** The request's deps (its store view): what a handler that is not audited runs with. */
    requestDeps: AppDeps,
    handler: (deps: AppDeps) => Promise<T> | T,
  ): Promise<T> {
    const { principal } = request;
    if (!isAudited(route) || principal === null) return handler(requestDeps);
    if (AUDITED_AFTER_ACTION.has(`${route.method.toUpperCase()} ${route.path}`)) {
      return audited(route, { ...request, principal }, deps, handler);
    }
    // A deploy asked for inside the unit of work is passed on once the unit has committed: the
    // deploy reads the store over other connections, which must see the change (realtime PJSIP
    // writes a saved user's rows at once, issue 24). A unit that rolls back deploys nothing.
    const deploys = new Set<string>();
    const held: DeployScheduler = {
      // Recorded through the unit itself (the save's transaction): it commits with the change.
      recordDeploy: (db, orgId) => deps.deployScheduler.recordDeploy(db, orgId),
      scheduleDeploy(orgId) {
        deploys.add(orgId);
      },
      copiesMedia: () => deps.deployScheduler.copiesMedia?.() ?? false,
    };
    const result = await inUnitOfWork(deps.db, (db) =>
      audited(route, { ...request, principal }, withDb(deps, db, held), handler),
    );
    for (const orgId of deploys) {
      try {
        deps.deployScheduler.scheduleDeploy(orgId);
      } catch {
        // As notifyConfigChanged: the save succeeded; the scheduler logs its own failures.
      }
    }
    return result;
  }

  /** Reads before, runs the handler, reads after and appends the record, all through `unitDeps`. */
  async function audited<T>(
    route: RouteDefinition,
    request: { params: Record<string, string>; principal: Principal; ctx: Context },
    unitDeps: AppDeps,
    handler: (deps: AppDeps) => Promise<T> | T,
  ): Promise<T> {
    const { principal, params, ctx } = request;
    const parts = pathParts(route.path, getPaths);
    const reader = readerOf(route);
    const paramValues = [...route.path.matchAll(/\{([A-Za-z0-9_]+)\}/g)].map(
      (m) => params[m[1]!] ?? "",
    );
    const before =
      parts.idParam !== null || route.method !== "post"
        ? await read(reader, paramValues, principal, ctx, unitDeps)
        : null;
    const requestScope: RequestScope = { deployedOrgs: new Set() };
    const result = await handler(notingDeploys(unitDeps, requestScope));

    const resourceId = parts.idParam !== null ? (params[parts.idParam] ?? null) : createdId(result);
    const action = actionOf(route, getPaths);
    let after: unknown = null;
    if (action !== "delete") {
      const values = parts.idParam !== null ? paramValues : resourceId !== null ? [resourceId] : [];
      after =
        (reader ? await read(reader, values, principal, ctx, unitDeps) : null) ?? dataOf(result);
    }
    const orgId = orgOf(principal, parts.resourceType, resourceId, params, result);
    await recordAudit(unitDeps.db, deps.clock(), {
      orgId,
      actor: actorOf(principal),
      requestId: String(ctx.state.requestId ?? ""),
      resourceType: parts.resourceType,
      resourceId,
      action,
      operation: `${route.method.toUpperCase()} ${route.path}`,
      before,
      after,
      schedulesDeploy: orgId !== null && requestScope.deployedOrgs.has(orgId),
    });
    return result;
  }

  return { around };
}

/**
 * `base` seen with a deploy scheduler that also notes in `scope` the orgs it was asked to deploy
 * (a proxy, not a copy: deps set after the router is built, such as a test's configDeploys, stay
 * visible).
 */
function notingDeploys(base: AppDeps, scope: RequestScope): AppDeps {
  const deployScheduler: DeployScheduler = {
    recordDeploy: (db, orgId) => base.deployScheduler.recordDeploy(db, orgId),
    scheduleDeploy(orgId) {
      scope.deployedOrgs.add(orgId);
      base.deployScheduler.scheduleDeploy(orgId);
    },
    copiesMedia: () => base.deployScheduler.copiesMedia?.() ?? false,
  };
  return new Proxy(base, {
    get: (target, property, receiver) =>
      property === "deployScheduler" ? deployScheduler : Reflect.get(target, property, receiver),
  });
}

/**
 * `base` seen with `db` as its store handle (the request's unit of work) and `scheduler` as its
 * deploy scheduler (which holds deploys until the unit commits).
 */
function withDb(base: AppDeps, db: Db, scheduler: DeployScheduler): AppDeps {
  return new Proxy(base, {
    get: (target, property, receiver) =>
      property === "db"
        ? db
        : property === "deployScheduler"
          ? scheduler
          : Reflect.get(target, property, receiver),
  });
}

/** The org a change belongs to: the caller's, or for admin and service calls the org it names. */
function orgOf(
  principal: Principal,
  resourceType: string,
  resourceId: string | null,
  params: Record<string, string>,
  result: unknown,
): string | null {
  if (principal.kind === "org") return principal.orgId;
  if (resourceType === "organizations" && resourceId !== null) return resourceId;
  if (params.orgId) return params.orgId;
  const body = dataOf(result) as { org_id?: unknown; organization_id?: unknown } | null;
  const named = body?.org_id ?? body?.organization_id;
  return typeof named === "string" ? named : null;
}
