// Schemas shared by several route files. Each is written once and serves both request
// validation (ajv) and the OpenAPI document.
import {
  type ObjectOptions,
  type TObject,
  type TPartial,
  type TSchema,
  Type,
} from "@sinclair/typebox";

export const ErrorBody = Type.Object(
  { error: Type.String({ description: "human-readable message" }) },
  { title: "Error" },
);

export const ServerErrorBody = Type.Object(
  {
    error: Type.Literal("Internal server error"),
    request_id: Type.String({ description: "quote it when reporting the problem" }),
  },
  { title: "ServerError" },
);

import { modelField, UuidString } from "../model/view-shapes.js";

export { modelField, Nullable, UuidString } from "../model/view-shapes.js";

export const IdParams = Type.Object({ id: UuidString });

export const Success = Type.Object({ success: Type.Literal(true) });

/**
 * The update body of a resource: its create body with every field optional and no defaults, so
 * an omitted field keeps the stored value. Create and update derive from one schema.
 */
export function updateBodyOf<T extends TObject>(create: T, options?: ObjectOptions): TPartial<T> {
  const partial = Type.Partial(create, { additionalProperties: false, ...options });
  for (const key of Object.keys(partial.properties)) {
    (partial.properties as Record<string, TSchema>)[key] = modelField(
      (partial.properties as Record<string, TSchema>)[key]!,
      (partial.properties as Record<string, TSchema>)[key]!.description,
    );
  }
  return partial;
}

export const TokenResponse = Type.Object({
  token: Type.String({ description: "JWT (HS256)" }),
  expires_in: Type.Integer({ description: "seconds" }),
});
