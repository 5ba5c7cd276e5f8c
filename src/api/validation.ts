// Request validation with ajv. Messages name the field and say what is wrong in plain words,
// e.g. `name is required`, `type must be one of: test, production`.

import type { TSchema } from "@sinclair/typebox";
import { Ajv, type ErrorObject, type ValidateFunction } from "ajv";
import addFormatsModule from "ajv-formats";
import { patternMessage, UNKNOWN_PATTERN_MESSAGE } from "../model/schema-check.js";

// ajv-formats is CommonJS with a default export; under NodeNext its namespace holds it.
const addFormats = addFormatsModule as unknown as typeof addFormatsModule.default;

function makeAjv(coerceTypes: boolean): Ajv {
  // strictNumbers: NaN and Infinity (JSON's 1e400) are not numbers to the engine.
  const ajv = new Ajv({
    allErrors: false,
    useDefaults: true,
    coerceTypes,
    strict: false,
    strictNumbers: true,
  });
  addFormats(ajv);
  return ajv;
}

// Params and query arrive as strings: coerce. Bodies are JSON: take types as sent.
const stringInputs = makeAjv(true);
const jsonInputs = makeAjv(false);

/** A validator for a path/query (coercing strings) or a JSON body. */
export function compileValidator(
  schema: TSchema,
  source: "params" | "query" | "body",
): ValidateFunction {
  return (source === "body" ? jsonInputs : stringInputs).compile(schema);
}

/** A validator called like ajv's: true when valid, else `errors` says why. */
export interface Validator {
  (data: unknown): boolean;
  readonly errors: ErrorObject[] | null | undefined;
}

/**
 * compileValidator's validator, compiled on its first call. Compiling every route's schemas
 * took half of `serve`'s start-up (docs/performance.md), for routes most processes never
 * serve; test/api/validation.test.ts compiles them all, so a schema ajv refuses still fails
 * the suite rather than a request.
 */
export function validatorOnFirstUse(
  schema: TSchema,
  source: "params" | "query" | "body",
): Validator {
  let compiled: ValidateFunction | undefined;
  const validate = (data: unknown): boolean => {
    compiled ??= compileValidator(schema, source);
    return compiled(data) as boolean;
  };
  return Object.defineProperty(validate, "errors", {
    get: () => compiled?.errors,
  }) as Validator;
}

function fieldName(instancePath: string, property?: string): string {
  const parts = instancePath
    .split("/")
    .filter(Boolean)
    .map((p) => p.replace(/~1/g, "/").replace(/~0/g, "~"));
  if (property !== undefined) parts.push(property);
  return parts.reduce(
    (name, part) => (/^\d+$/.test(part) ? `${name}[${part}]` : name ? `${name}.${part}` : part),
    "",
  );
}

const FORMAT_NAMES: Record<string, string> = {
  uuid: "a UUID",
  uri: "a URL",
  email: "an email address",
  "date-time": "an ISO 8601 date and time",
};

/** One readable sentence for ajv's errors (the first problem found). */
export function describeValidationErrors(
  errors: ErrorObject[] | null | undefined,
  source: string,
): string {
  const list = errors ?? [];
  const anyOf = list.find((e) => e.keyword === "anyOf");
  // A union of literals (TypeBox's enum form): list the allowed values instead of each branch.
  if (anyOf) {
    const allowed = list
      .filter((e) => e.keyword === "const" && e.instancePath === anyOf.instancePath)
      .map((e) => String((e.params as { allowedValue: unknown }).allowedValue));
    const field = fieldName(anyOf.instancePath) || source;
    if (allowed.length > 0) return `${field} must be one of: ${allowed.join(", ")}`;
  }
  // A union of forms (an array or its text form): the branches of another type than the value
  // only say "must be array"; the error of the branch of the value's own type says what is wrong.
  const ownForm = anyOf
    ? list.filter(
        (e) =>
          e.keyword !== "anyOf" && !(e.keyword === "type" && e.instancePath === anyOf.instancePath),
      )
    : list;
  const first = ownForm[0] ?? list[0];
  if (!first) return `Invalid ${source}`;
  const params = first.params as Record<string, unknown>;
  switch (first.keyword) {
    case "required":
      return `${fieldName(first.instancePath, String(params.missingProperty))} is required`;
    case "additionalProperties":
      return `Unknown field: ${fieldName(first.instancePath, String(params.additionalProperty))}`;
    case "enum":
      return `${fieldName(first.instancePath) || source} must be one of: ${(params.allowedValues as unknown[]).join(", ")}`;
    case "type":
      return `${fieldName(first.instancePath) || source} must be ${String(params.type)}`;
    case "format": {
      const format = String(params.format);
      const what = FORMAT_NAMES[format] ?? `in ${format} format`;
      return `${fieldName(first.instancePath) || source} must be ${what}`;
    }
    case "pattern": {
      // The model's patterns have a rule in plain words; say that instead of the regex.
      const rule = patternMessage(String(params.pattern));
      if (rule) return `${fieldName(first.instancePath) || source} ${rule}`;
      return `${fieldName(first.instancePath) || source} ${UNKNOWN_PATTERN_MESSAGE}`;
    }
    default:
      return `${fieldName(first.instancePath) || source} ${first.message ?? "is invalid"}`;
  }
}
