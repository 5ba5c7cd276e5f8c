// Building blocks of the API's view schemas (the answers of `src/api/routes`), below the domain so
// that a use case's view type is `Static<>` of the schema the API documents and answers with:
// one declaration of each view, not a TypeScript interface restating it field by field.
import { type Static, type TObject, type TSchema, Type } from "@sinclair/typebox";

export const UuidString = Type.String({ format: "uuid", description: "UUID" });

/** An instant as ISO 8601 text (`toISOString()`). */
export const DateTime = Type.String({ format: "date-time" });

/** A nullable value in the form OpenAPI 3.0 understands (`nullable: true`, no `type: null`). */
export function Nullable<T extends TSchema>(schema: T) {
  return Type.Unsafe<Static<T> | null>({ ...schema, nullable: true });
}

/**
 * A model field schema (`src/model/org-state.ts`) for a request body: the same rules, without the
 * model's `default` (Ajv fills defaults, which a partial update must not get), and with
 * `description` when given.
 */
export function modelField<T extends TSchema>(schema: T, description?: string): T {
  const { default: _default, ...rest } = schema as T & { default?: unknown };
  return (description === undefined ? rest : { ...rest, description }) as T;
}

/**
 * The fields of `value` that a view schema shows, in the schema's order (the order the API
 * answers in): a stored record becomes its view without restating the fields, and a field the
 * view leaves out (a sealed key) cannot leak.
 */
export function viewOf<T extends TObject>(schema: T, value: Static<T>): Static<T> {
  const source = value as Record<string, unknown>;
  const view: Record<string, unknown> = {};
  for (const key of Object.keys(schema.properties)) {
    if (key in source) view[key] = source[key];
  }
  return view as Static<T>;
}
