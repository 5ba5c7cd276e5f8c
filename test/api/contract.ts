// The contract check of the API tests: every answer the shared test helper receives is checked
// against the OpenAPI document the server publishes. The status must be one the operation lists,
// and a JSON body must match the schema documented for that status (Ajv over the document's
// schemas, read in OpenAPI 3.0's dialect). So the document cannot drift from the behaviour
// without a test failing.
import { Ajv, type ValidateFunction } from "ajv";
import addFormatsModule from "ajv-formats";
import type { RouteDefinition } from "../../src/api/registry.js";

const addFormats = addFormatsModule as unknown as typeof addFormatsModule.default;

type Json = Record<string, unknown>;

interface Operation {
  pattern: RegExp;
  /** Static segments count: `/users/batch` wins over `/users/{id}`. */
  specificity: number;
  method: string;
  responses: Record<string, Json>;
}

export interface ContractAnswer {
  status: number;
  contentType: string;
  body: unknown;
}

/** An OpenAPI 3.0 schema as JSON Schema (draft 7): `nullable` becomes a `null` type. */
export function toJsonSchema(schema: unknown, components: Json): unknown {
  if (Array.isArray(schema)) return schema.map((s) => toJsonSchema(s, components));
  if (typeof schema !== "object" || schema === null) return schema;
  const input = schema as Json;
  if (typeof input.$ref === "string") {
    const name = input.$ref.replace("#/components/schemas/", "");
    return toJsonSchema(components[name], components);
  }
  const out: Json = {};
  for (const [key, value] of Object.entries(input)) {
    if (key === "properties") {
      out[key] = Object.fromEntries(
        Object.entries(value as Json).map(([name, sub]) => [name, toJsonSchema(sub, components)]),
      );
    } else if (key === "nullable" || key === "example") {
      // handled below / documentation only
    } else if (key === "exclusiveMinimum" || key === "exclusiveMaximum") {
      if (value === true) out[key] = input[key === "exclusiveMinimum" ? "minimum" : "maximum"];
    } else if (key === "enum" || key === "default" || key === "required") {
      out[key] = value;
    } else {
      out[key] = toJsonSchema(value, components);
    }
  }
  if (input.nullable === true && typeof out.type === "string") {
    out.type = [out.type, "null"];
    if (Array.isArray(out.enum) && !out.enum.includes(null)) out.enum = [...out.enum, null];
  }
  return out;
}

/** Checks answers of the app whose document is `document` (and whose aliases are in `routes`). */
export function createContract(document: Json, routes: readonly RouteDefinition[]) {
  const ajv = new Ajv({ strict: false, allErrors: true });
  addFormats(ajv);
  const components = ((document.components as Json | undefined)?.schemas ?? {}) as Json;
  const paths = document.paths as Record<string, Record<string, Json>>;
  const operations: Operation[] = [];
  const add = (path: string, method: string, op: Json) => {
    const segments = path.split("/").filter(Boolean);
    operations.push({
      pattern: new RegExp(
        `^/api/v1${segments.map((s) => (s.startsWith("{") ? "/[^/]+" : `/${s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}`)).join("")}$`,
      ),
      specificity: segments.filter((s) => !s.startsWith("{")).length,
      method,
      responses: op.responses as Record<string, Json>,
    });
  };
  for (const [path, ops] of Object.entries(paths)) {
    for (const [method, op] of Object.entries(ops)) add(path, method, op);
  }
  for (const alias of routes.filter((r) => r.aliasOf)) {
    const op = paths[alias.aliasOf!]?.[alias.method];
    if (op) add(alias.path, alias.method, op);
  }
  operations.sort((a, b) => b.specificity - a.specificity);
  const validators = new Map<Json, ValidateFunction>();

  /** The problem with `answer` to `method url`, or null when it keeps the document's word. */
  return function check(method: string, url: string, answer: ContractAnswer): string | null {
    const path = new URL(url, "http://x").pathname;
    const op = operations.find((o) => o.method === method.toLowerCase() && o.pattern.test(path));
    if (!op) return null; // not an API operation (/health, docs pages) or a method it lacks (405)
    const documented = op.responses[String(answer.status)];
    if (!documented) {
      return `${method} ${path}: status ${answer.status} is not documented (documented: ${Object.keys(op.responses).join(", ")})`;
    }
    const content = documented.content as Record<string, { schema?: Json }> | undefined;
    if (!content) return null;
    const type = answer.contentType.split(";")[0]!.trim();
    const media = content[type];
    if (!media) {
      return `${method} ${path} ${answer.status}: Content-Type ${type || "(none)"} is not documented (${Object.keys(content).join(", ")})`;
    }
    if (type !== "application/json" || !media.schema) return null;
    let validate = validators.get(media.schema);
    if (!validate) {
      validate = ajv.compile(toJsonSchema(media.schema, components) as Json);
      validators.set(media.schema, validate);
    }
    if (validate(answer.body)) return null;
    return `${method} ${path} ${answer.status}: body does not match the documented schema: ${ajv.errorsText(validate.errors)}\n${JSON.stringify(answer.body).slice(0, 500)}`;
  };
}
