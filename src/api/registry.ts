// The route registry: a route is declared once with `defineRoute` (method, path, tag, auth,
// permission, schemas, responses, handler). From that one declaration the app validates requests,
// checks credentials and permissions, registers the Koa route and writes the OpenAPI operation.
import { type Static, type TObject, type TSchema, Type } from "@sinclair/typebox";
import type { Context } from "koa";
import type { Permission } from "../domain/access/permissions.js";
import type { Principal } from "../domain/access/principal.js";
import { ADMIN_SCOPE_TEXT, inAdminScope } from "./admin-scope.js";
import type { AppDeps } from "./deps.js";
import { type ListStyle, PageQuery, pageSchema } from "./pagination.js";
import type { TagName } from "./tags.js";

export type HttpMethod = "get" | "post" | "put" | "patch" | "delete";

/**
 * Who may call a route:
 * - `org`: `X-API-Key` (`ak_` or `org_`), org/user bearer JWT, or `X-Internal-Key` + `org_id`;
 * - `admin`: admin bearer JWT; `internal`: `X-Internal-Key` alone (service scope);
 * - `pending-user`: the token of a signed-in person with no org yet; `public`: anyone.
 */
export type AuthKind = "org" | "admin" | "internal" | "public" | "pending-user";

export interface ResponseSpec {
  description: string;
  schema?: TSchema;
  /** Defaults to application/json when a schema is given. */
  contentType?: string;
  /** Several media types of the same schema (an export in a format the query picks). */
  contentTypes?: readonly string[];
  /** Response headers the answer carries (e.g. `Retry-After` on a 429), by name. */
  headers?: Record<string, { description: string; schema: { type: "integer"; minimum?: number } }>;
}

export interface RouteRequest<P, Q, B> {
  params: P;
  query: Q;
  body: B;
  /** Null only on `public` routes. */
  principal: Principal | null;
  deps: AppDeps;
  ctx: Context;
}

export interface RouteSpec<P extends TObject, Q extends TObject, B extends TSchema> {
  method: HttpMethod;
  /** Relative to /api/v1, OpenAPI style: `/organizations/{id}`. */
  path: string;
  tag: TagName;
  summary: string;
  description?: string;
  /** One kind or several accepted kinds. */
  auth: AuthKind | readonly AuthKind[];
  /** Needed by `ak_` keys and user roles; org-wide credentials hold every permission. */
  permission?: Permission;
  params?: P;
  query?: Q;
  body?: B;
  /** Message answered (400) for any body validation failure, when the spec fixes one. */
  bodyError?: string;
  /** Success responses by status; error responses are added by the registry. */
  responses: Record<number, ResponseSpec>;
  /**
   * A list operation: the handler returns every row in a stable order, the 200 schema is
   * `Type.Array(item)`; the registry adds `limit`/`offset` and answers one page (pagination.ts).
   */
  list?: ListStyle;
  /**
   * A second path of the operation documented at `aliasOf`: answered, but left out of the
   * OpenAPI document (a path SPEC.md names that would make the document ambiguous).
   */
  aliasOf?: string;
  /**
   * Requests the service itself sends because of this operation (webhook deliveries), by name:
   * published as the operation's OpenAPI `callbacks`, POSTed to the URL of the request body.
   */
  callbacks?: Readonly<Record<string, { summary: string; description?: string; body: TSchema }>>;
  /** A raw (non-JSON) request body the handler reads itself, by media type. */
  upload?: { contentTypes: readonly string[]; description: string };
  handler: (req: RouteRequest<Static<P>, Static<Q>, Static<B>>) => Promise<unknown> | unknown;
}

/** A route as the registry stores it (types erased). */
export type RouteDefinition = RouteSpec<TObject, TObject, TSchema> & {
  authKinds: readonly AuthKind[];
};

/** A handler result that sets the status (and headers) explicitly. */
export class Reply {
  constructor(
    readonly status: number,
    readonly body?: unknown,
    readonly headers: Record<string, string> = {},
  ) {}
}

/** Answer with `status` and `body` (e.g. `reply(201, created)`). */
export function reply(status: number, body?: unknown, headers?: Record<string, string>): Reply {
  return new Reply(status, body, headers);
}

/** Declares a route; the same object drives validation, auth, Koa and OpenAPI. */
export function defineRoute<
  P extends TObject = TObject<Record<never, never>>,
  Q extends TObject = TObject<Record<never, never>>,
  B extends TSchema = TSchema,
>(spec: RouteSpec<P, Q, B>): RouteDefinition {
  const authKinds = typeof spec.auth === "string" ? [spec.auth] : spec.auth;
  if (authKinds.includes("admin") && !inAdminScope(spec.method, spec.path)) {
    throw new Error(
      `${spec.method.toUpperCase()} ${spec.path} accepts admin tokens outside ${ADMIN_SCOPE_TEXT}`,
    );
  }
  const route = { ...(spec as unknown as RouteSpec<TObject, TObject, TSchema>), authKinds };
  return route.list ? asList(route, route.list) : route;
}

/** A list route with the page parameters in its query and the page as its 200 body. */
function asList(route: RouteDefinition, style: ListStyle): RouteDefinition {
  const ok = route.responses[200];
  const items = (ok?.schema as { items?: TSchema } | undefined)?.items;
  if (!ok || !items) throw new Error(`list route ${route.path}: 200 must be Type.Array(item)`);
  const { properties = {}, ...options } = (route.query ?? {}) as Partial<TObject>;
  return {
    ...route,
    query: Type.Object({ ...properties, ...PageQuery.properties }, options),
    responses: {
      ...route.responses,
      200: {
        ...ok,
        schema: pageSchema(items, style),
        description:
          style === "array"
            ? `${ok.description} (one page; the list's total is in X-Total-Count)`
            : `${ok.description} (one page, with the list's total)`,
      },
    },
  };
}
