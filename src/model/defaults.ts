// The model's defaults live in its schema (TypeBox `default`s, also published in the OpenAPI
// document). Code that builds a resource from the fields a caller gave fills the rest from the
// schema through this one helper, so no default is restated anywhere else.
import type { Static, TObject, TSchema } from "@sinclair/typebox";
import { Value } from "@sinclair/typebox/value";

/**
 * `given` with every omitted (undefined) property the schema has a `default` for filled in,
 * nested objects included. `given` is not changed; defaults are copies.
 */
export function withDefaults<T extends TSchema>(schema: T, given: Partial<Static<T>>): Static<T> {
  const copy: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(given)) if (value !== undefined) copy[key] = value;
  return Value.Default(schema, copy) as Static<T>;
}

/** The schema's `default` of one property of an object schema (e.g. an IVR's `timeout`). */
export function defaultOf<T extends TObject, K extends keyof Static<T> & string>(
  schema: T,
  key: K,
): Static<T>[K] {
  return structuredClone(schema.properties[key]?.default) as Static<T>[K];
}

/** `value`, or the schema's default for `key` when it is null or undefined. */
export function orDefault<T extends TObject, K extends keyof Static<T> & string>(
  schema: T,
  key: K,
  value: Static<T>[K] | null | undefined,
): Static<T>[K] {
  return value ?? defaultOf(schema, key);
}
