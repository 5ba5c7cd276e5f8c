// The one place errors become HTTP answers. Domain errors carry their status and the message the
// client reads; body-parser failures become 400/413; anything else is a 500 whose details go to
// the log only, under a request id the client can quote.
import type { Context, Next } from "koa";
import type { Logger } from "pino";
import { isDomainError } from "../domain/errors.js";
import { ClientGone } from "./client-gone.js";

const DEFAULT_MESSAGES: Record<number, string> = {
  400: "Bad request",
  401: "Authentication required",
  403: "Forbidden",
  404: "Not found",
  405: "Method not allowed",
  413: "Request body too large",
  415: "Unsupported media type",
};

/** Status and message of errors thrown by Koa's own layers (body parser, router). */
function httpError(error: unknown): { status: number; message: string } | null {
  if (typeof error !== "object" || error === null) return null;
  const { status, type, expose } = error as { status?: unknown; type?: unknown; expose?: unknown };
  if (typeof status !== "number" || status < 400 || status >= 500) return null;
  if (status === 413 || type === "entity.too.large")
    return { status: 413, message: DEFAULT_MESSAGES[413]! };
  if (type === "entity.parse.failed" || (status === 400 && error instanceof SyntaxError))
    return { status: 400, message: "Malformed JSON body" };
  if (type === "encoding.unsupported" || type === "charset.unsupported") {
    return { status: 415, message: "Unsupported body encoding" };
  }
  if (expose !== true) return null;
  return { status, message: DEFAULT_MESSAGES[status] ?? "Bad request" };
}

/** Koa middleware answering every error as `{"error": "<message>"}`. */
export function errorMiddleware(logger: Logger) {
  return async (ctx: Context, next: Next): Promise<void> => {
    try {
      await next();
      if (ctx.status >= 400 && ctx.body == null) {
        // Setting a body makes Koa answer 200 unless the status is set again.
        const status = ctx.status;
        ctx.body = { error: DEFAULT_MESSAGES[status] ?? "Error" };
        ctx.status = status;
      }
    } catch (error) {
      const requestId = ctx.state.requestId as string;
      if (isDomainError(error)) {
        const wait = (error as { retryAfterSeconds?: unknown }).retryAfterSeconds;
        if (typeof wait === "number") ctx.set("Retry-After", String(wait));
        ctx.status = error.status;
        ctx.body = { error: error.message };
        return;
      }
      if (error instanceof ClientGone) {
        // Nobody reads this answer; the work stopped because the client left.
        logger.info({ request_id: requestId, path: ctx.path }, "client left; work abandoned");
        ctx.status = 400;
        ctx.body = { error: "Client closed the request" };
        return;
      }
      const known = httpError(error);
      if (known) {
        ctx.status = known.status;
        ctx.body = { error: known.message };
        return;
      }
      logger.error(
        { err: error, request_id: requestId, method: ctx.method, path: ctx.path },
        "unhandled error",
      );
      ctx.status = 500;
      ctx.body = { error: "Internal server error", request_id: requestId };
    }
  };
}
