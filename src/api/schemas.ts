// Schemas shared by several route files. Each is written once and serves both request
// validation (ajv) and the OpenAPI document.
import { type TSchema, Type } from "@sinclair/typebox";

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

export const UuidString = Type.String({ format: "uuid", description: "UUID" });

export const IdParams = Type.Object({ id: UuidString });

export const Success = Type.Object({ success: Type.Literal(true) });

/** A nullable value in the form OpenAPI 3.0 understands (`nullable: true`, no `type: null`). */
export function Nullable<T extends TSchema>(schema: T) {
  return Type.Unsafe<import("@sinclair/typebox").Static<T> | null>({ ...schema, nullable: true });
}

export const TokenResponse = Type.Object({
  token: Type.String({ description: "JWT (HS256)" }),
  expires_in: Type.Integer({ description: "seconds" }),
});
