// Writes the OpenAPI 3.0.3 document from the route definitions: the same TypeBox schemas that
// validate requests, converted to the 3.0 dialect (nullable instead of type null, enum instead
// of const, boolean exclusive bounds).
import type { TSchema } from "@sinclair/typebox";
import { TOTAL_HEADER } from "./pagination.js";
import type { AuthKind, RouteDefinition } from "./registry.js";
import { withRequestExamples } from "./request-examples.js";
import { ErrorBody, ServerErrorBody } from "./schemas.js";
import { TAGS } from "./tags.js";

type Json = Record<string, unknown>;

const DROPPED_KEYS = new Set(["$id", "$schema", "examples"]);

/** A JSON Schema (draft 7 style, as TypeBox writes it) in OpenAPI 3.0's schema dialect. */
export function toOpenApiSchema(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(toOpenApiSchema);
  if (typeof schema !== "object" || schema === null) return schema;
  const input = schema as Json;
  const out: Json = {};
  for (const [key, value] of Object.entries(input)) {
    if (DROPPED_KEYS.has(key)) continue;
    if (key === "properties" || key === "patternProperties") {
      out[key] = Object.fromEntries(
        Object.entries(value as Json).map(([name, sub]) => [name, toOpenApiSchema(sub)]),
      );
    } else if (key === "const") {
      out.enum = [value];
    } else if (key === "exclusiveMinimum" && typeof value === "number") {
      out.minimum = value;
      out.exclusiveMinimum = true;
    } else if (key === "exclusiveMaximum" && typeof value === "number") {
      out.maximum = value;
      out.exclusiveMaximum = true;
    } else if (key === "default" || key === "example" || key === "enum") {
      out[key] = value;
    } else {
      out[key] = toOpenApiSchema(value);
    }
  }
  if (out.const === undefined && Array.isArray(out.enum) && typeof input.type === "undefined") {
    const sample = (out.enum as unknown[])[0];
    if (typeof sample === "string" || typeof sample === "number" || typeof sample === "boolean") {
      out.type = typeof sample;
    }
  }
  for (const combiner of ["anyOf", "oneOf"] as const) {
    const branches = out[combiner] as Json[] | undefined;
    if (!branches) continue;
    // Branches are converted already: `Type.Null()` arrives as a bare `{nullable: true}`.
    const nonNull = branches.filter((b) => b.type !== "null" && !isBareNullable(b));
    if (nonNull.length !== branches.length) out.nullable = true;
    if (
      nonNull.every(
        (b) => Array.isArray(b.enum) && Object.keys(b).every((k) => k === "enum" || k === "type"),
      )
    ) {
      // A union of literals is an enum.
      delete out[combiner];
      out.enum = nonNull.flatMap((b) => b.enum as unknown[]);
      const first = nonNull[0];
      if (first?.type) out.type = first.type;
      if (out.nullable) (out.enum as unknown[]).push(null);
    } else if (nonNull.length === 1) {
      delete out[combiner];
      Object.assign(out, nonNull[0]);
    } else if (out.nullable) {
      // OpenAPI 3.0 reads `nullable` only beside a `type`: each branch says it for itself.
      delete out.nullable;
      out[combiner] = nonNull.map((b) => (b.type ? { ...b, nullable: true } : b));
    } else {
      out[combiner] = nonNull;
    }
  }
  if (out.type === "null") {
    // Always null: 3.0 has no null type, and `nullable` needs a `type` beside it.
    Object.assign(out, ONLY_NULL);
  }
  return out;
}

const ONLY_NULL = { type: "string", nullable: true, enum: [null] };

/** A converted `Type.Null()` branch (see ONLY_NULL). */
function isBareNullable(schema: Json): boolean {
  return (
    schema.nullable === true &&
    Array.isArray(schema.enum) &&
    schema.enum.length === 1 &&
    schema.enum[0] === null
  );
}

export interface OpenApiOptions {
  baseUrl: string;
  version: string;
}

const ERROR_REF = { $ref: "#/components/schemas/Error" };

function errorResponse(description: string) {
  return { description, content: { "application/json": { schema: ERROR_REF } } };
}

function security(kinds: readonly AuthKind[]): Json[] {
  if (kinds.includes("public")) return [];
  const list: Json[] = [];
  // Org operations list the API-key scheme before the bearer scheme (SPEC.md §1).
  if (kinds.includes("org")) list.push({ apiKey: [] });
  if (kinds.some((k) => k === "org" || k === "admin" || k === "pending-user"))
    list.push({ bearer: [] });
  if (kinds.includes("internal")) list.push({ internalKey: [] });
  return list;
}

function operationId(route: RouteDefinition): string {
  const words = route.path
    .split("/")
    .filter(Boolean)
    .map((s) => (s.startsWith("{") ? `by_${s.slice(1, -1)}` : s))
    .join("_")
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean);
  return [route.method, ...words]
    .map((w, i) => (i === 0 ? w : w[0]!.toUpperCase() + w.slice(1)))
    .join("");
}

function parameters(route: RouteDefinition): Json[] {
  const list: Json[] = [];
  const add = (where: "path" | "query", schema: TSchema | undefined) => {
    const properties = (schema as Json | undefined)?.properties as Json | undefined;
    if (!properties) return;
    const required = new Set(((schema as Json).required as string[] | undefined) ?? []);
    for (const [name, sub] of Object.entries(properties)) {
      const converted = toOpenApiSchema(sub) as Json;
      list.push({
        name,
        in: where,
        required: where === "path" || required.has(name),
        ...(typeof converted.description === "string"
          ? { description: converted.description }
          : {}),
        schema: converted,
      });
    }
  };
  add("path", route.params);
  add("query", route.query);
  if (route.authKinds.includes("org")) {
    list.push({
      name: "org_id",
      in: "query",
      required: false,
      description: "Org to act on; only with the X-Internal-Key header.",
      schema: { type: "string", format: "uuid" },
    });
  }
  return list;
}

function operation(route: RouteDefinition): Json {
  const responses: Json = {};
  for (const [status, spec] of Object.entries(route.responses)) {
    if (!spec.schema && Number(status) >= 400) {
      // Every error answer is `{"error": ...}`, declared or not.
      responses[status] = errorResponse(spec.description);
      if (spec.headers) (responses[status] as Json).headers = { ...spec.headers };
      continue;
    }
    responses[status] = spec.schema
      ? {
          description: spec.description,
          content: Object.fromEntries(
            (spec.contentTypes ?? [spec.contentType ?? "application/json"]).map((type) => [
              type,
              { schema: toOpenApiSchema(spec.schema!) },
            ]),
          ),
        }
      : { description: spec.description };
    if (spec.headers) (responses[status] as Json).headers = { ...spec.headers };
  }
  if (route.list && responses[200]) {
    (responses[200] as Json).headers = {
      [TOTAL_HEADER]: {
        description: "rows in the whole list",
        schema: { type: "integer", minimum: 0 },
      },
    };
  }
  // Every POST, PUT, PATCH and DELETE passes the JSON body parser, whatever the route reads.
  const takesBody = route.method !== "get";
  const validates = route.params || route.query || route.body || takesBody;
  if (validates && !responses[400]) {
    responses[400] = errorResponse(
      takesBody
        ? "Invalid request (including `Malformed JSON body` and a body that does not decode)"
        : "Invalid request",
    );
  }
  if (takesBody) {
    responses[413] ??= errorResponse("Request body too large (PBX_BODY_LIMIT)");
    responses[415] ??= errorResponse(
      route.upload
        ? "Unsupported media type or Content-Encoding"
        : "Body not JSON (Content-Type), or an unsupported Content-Encoding",
    );
  }
  if (!route.authKinds.includes("public")) {
    if (!responses[401]) responses[401] = errorResponse("Missing or invalid credentials");
    if (!responses[403]) responses[403] = errorResponse("Not allowed for these credentials");
  }
  if (route.path.includes("{") && !responses[404]) responses[404] = errorResponse("Not found");
  responses[500] = {
    description: "Unexpected server error (details only in the server log)",
    content: { "application/json": { schema: { $ref: "#/components/schemas/ServerError" } } },
  };
  const op: Json = {
    operationId: operationId(route),
    tags: [route.tag],
    summary: route.summary,
    description: description(route),
    security: security(route.authKinds),
    ...(route.permission ? { "x-permission": route.permission } : {}),
    responses,
  };
  const params = parameters(route);
  if (params.length > 0) op.parameters = params;
  if (route.body) {
    op.requestBody = {
      required: true,
      content: { "application/json": { schema: withRequestExamples(toOpenApiSchema(route.body)) } },
    };
  }
  if (route.callbacks) op.callbacks = callbacks(route);
  if (route.upload) {
    const binary = { schema: { type: "string", format: "binary" } };
    op.requestBody = {
      required: true,
      description: route.upload.description,
      content: Object.fromEntries(route.upload.contentTypes.map((type) => [type, binary])),
    };
  }
  return op;
}

/** The OpenAPI `callbacks` of a route: each one a POST to the `url` of the request body. */
function callbacks(route: RouteDefinition): Json {
  const out: Json = {};
  for (const [name, callback] of Object.entries(route.callbacks ?? {})) {
    out[name] = {
      "{$request.body#/url}": {
        post: {
          operationId: `callback${name
            .split(/[^A-Za-z0-9]+/)
            .map((w) => w[0]!.toUpperCase() + w.slice(1))
            .join("")}`,
          tags: [route.tag],
          summary: callback.summary,
          description: callback.description ?? `${callback.summary}.`,
          security: [],
          requestBody: {
            required: true,
            content: { "application/json": { schema: toOpenApiSchema(callback.body) } },
          },
          responses: {
            "2XX": { description: "Delivered" },
            "4XX": { description: "Refused: retried with backoff (410 deactivates the webhook)" },
          },
        },
      },
    };
  }
  return out;
}

const WHO: Record<AuthKind, string> = {
  org: "an org credential (`X-API-Key` org or `ak_` key, an org or user JWT, or `X-Internal-Key` with `org_id`)",
  admin: "an admin JWT",
  internal: "the `X-Internal-Key` header",
  "pending-user": "the JWT of a signed-in person",
  public: "no credential",
};

/** The route's own description, then who may call it and the permission it needs. */
function description(route: RouteDefinition): string {
  const who = `Called with ${route.authKinds.map((kind) => WHO[kind]).join(", or ")}.`;
  const permission = route.permission ? ` Needs the \`${route.permission}\` permission.` : "";
  const own = route.description ?? `${route.summary}.`;
  return `${own}\n\n${who}${permission}`;
}

/** The OpenAPI 3.0.3 document of `routes`. */
export function buildOpenApiDocument(
  routes: readonly RouteDefinition[],
  options: OpenApiOptions,
): Json {
  const paths: Record<string, Json> = {};
  const sorted = [...routes].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  for (const route of sorted) {
    if (route.aliasOf) continue;
    paths[route.path] ??= {};
    paths[route.path]![route.method] = operation(route);
  }
  return {
    openapi: "3.0.3",
    info: {
      title: "pbxctl API",
      version: options.version,
      contact: { name: "pbxctl maintainers", url: `${options.baseUrl}/reference` },
      license: { name: "MIT", url: "https://opensource.org/licenses/MIT" },
      description:
        'Multi-tenant cloud PBX management. Every path is under `/api/v1`. Errors are `{"error": "<message>"}`.',
    },
    servers: [
      { url: "/api/v1", description: "This server" },
      { url: `${options.baseUrl}/api/v1`, description: "Configured public address (PBX_BASE_URL)" },
    ],
    tags: TAGS.map((t) => ({ name: t.name, description: t.description })),
    paths,
    components: {
      securitySchemes: {
        apiKey: {
          type: "apiKey",
          in: "header",
          name: "X-API-Key",
          description: "Org key (`org_...`) or granular API key (`ak_...`).",
        },
        bearer: {
          type: "http",
          scheme: "bearer",
          bearerFormat: "JWT",
          description: "Org, user, pending-user or admin JWT (admin JWTs only on /admin/*).",
        },
        internalKey: {
          type: "apiKey",
          in: "header",
          name: "X-Internal-Key",
          description:
            "Server-to-server key (PBX_INTERNAL_KEY); org operations also take `org_id`.",
        },
      },
      schemas: {
        Error: toOpenApiSchema(ErrorBody),
        ServerError: toOpenApiSchema(ServerErrorBody),
      },
    },
  };
}
