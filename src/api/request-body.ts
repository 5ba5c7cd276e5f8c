// Reading JSON request bodies, and refusing the ones the API cannot read as sent: an unknown
// Content-Encoding (415), a body that does not decode with its Content-Encoding (400), a body in
// another media type than JSON on an operation that takes JSON (415), and text that is not valid
// Unicode (400: a lone UTF-16 surrogate would be stored as U+FFFD and read back differently).
import { bodyParser } from "@koa/bodyparser";
import type { Context, Middleware } from "koa";
import { BadRequest, UnsupportedMediaType } from "../domain/errors.js";

/** Content codings the JSON body parser decodes (co-body through `inflation`). */
export const BODY_ENCODINGS = ["identity", "gzip", "deflate", "br"] as const;

const ENCODING_MESSAGE = `Unsupported Content-Encoding; accepted: ${BODY_ENCODINGS.join(", ")}`;

/** The methods whose bodies are read; SPEC.md §4.3's member removal is a DELETE with a body. */
const BODY_METHODS = ["POST", "PUT", "PATCH", "DELETE"] as const;

const JSON_TYPES = ["application/json", "application/*+json"];

/** The body's content codings, outermost last, lower-cased (`identity` when none is named). */
function contentEncodings(ctx: Context): string[] {
  const header = ctx.get("content-encoding").trim().toLowerCase();
  return header === "" ? ["identity"] : header.split(",").map((coding) => coding.trim());
}

/** True when the request carries body bytes (a length above 0, or a chunked body). */
export function hasRequestBody(ctx: Context): boolean {
  return (ctx.request.length ?? 0) > 0 || ctx.get("transfer-encoding") !== "";
}

/** 415 unless the body is sent without a content coding (raw uploads are read as they come). */
export function assertIdentityEncoding(ctx: Context): void {
  if (contentEncodings(ctx).some((coding) => coding !== "identity")) {
    throw new UnsupportedMediaType("Content-Encoding must be identity for this operation");
  }
}

/** 415 unless a body that is present is JSON (an operation with a JSON body schema). */
export function assertJsonBody(ctx: Context): void {
  if (hasRequestBody(ctx) && !ctx.is(JSON_TYPES)) {
    throw new UnsupportedMediaType("Content-Type must be application/json");
  }
}

/**
 * Parses JSON bodies of POST, PUT, PATCH and DELETE (SPEC.md §4.3's member removal carries one).
 * Only one content coding is decoded, and only the known ones: anything else is a 415 before a
 * byte is read; a body that fails to decode is the client's error (400), not the server's.
 */
export function jsonBodyParser(limit: string): Middleware {
  const parse = bodyParser({
    enableTypes: ["json"],
    jsonLimit: limit,
    parsedMethods: [...BODY_METHODS],
    onError: (error) => {
      const { status, type } = error as { status?: unknown; type?: unknown };
      // `inflation` refuses a coding it does not know with a bare 415 (e.g. `GZIP`).
      if (status === 415 && type === undefined) throw new UnsupportedMediaType(ENCODING_MESSAGE);
      if (typeof status === "number" && status >= 400 && status < 500) throw error;
      throw new BadRequest("Request body could not be decoded with its Content-Encoding");
    },
  });
  return async (ctx, next) => {
    // A GET (or HEAD, OPTIONS) has no body semantics: a body sent with one is never read, so its
    // coding and type are no reason to refuse the request (issue 28 item 6). The parser would
    // pass it on as well; going on here spares every read a layer.
    if (!(BODY_METHODS as readonly string[]).includes(ctx.method)) return next();
    if (hasRequestBody(ctx)) {
      const codings = contentEncodings(ctx);
      const known = (BODY_ENCODINGS as readonly string[]).includes(codings[0]!);
      if (codings.length > 1 || !known) {
        throw new UnsupportedMediaType(ENCODING_MESSAGE);
      }
    }
    return parse(ctx, next);
  };
}

/** Matches a UTF-16 surrogate that is not half of a pair (the `u` flag reads pairs as one). */
const LONE_SURROGATE = /[\uD800-\uDFFF]/u;

/**
 * The path (`name`, `options[2].digit`) of the first string or key holding a lone surrogate.
 * Walks with an explicit stack: a body may nest far deeper than the call stack goes.
 */
export function findLoneSurrogate(value: unknown): string | null {
  const stack: Array<[unknown, string]> = [[value, ""]];
  while (stack.length > 0) {
    const [item, path] = stack.pop()!;
    if (typeof item === "string") {
      if (LONE_SURROGATE.test(item)) return path || "body";
    } else if (Array.isArray(item)) {
      for (let i = item.length - 1; i >= 0; i--) stack.push([item[i], `${path}[${i}]`]);
    } else if (typeof item === "object" && item !== null) {
      const entries = Object.entries(item);
      for (const [key] of entries) if (LONE_SURROGATE.test(key)) return path || "body";
      for (const [key, child] of entries.reverse()) {
        stack.push([child, path ? `${path}.${key}` : key]);
      }
    }
  }
  return null;
}

/** 400 when any text in the parsed body is not valid Unicode. */
export function assertWellFormedText(body: unknown): void {
  const at = findLoneSurrogate(body);
  if (at) throw new BadRequest(`${at} must be valid Unicode text (it holds a lone surrogate)`);
}
