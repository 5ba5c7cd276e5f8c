// Security headers on every answer. API answers are data: nothing may load or frame them. The
// documentation pages get a policy that allows only this server's own scripts and styles.
import { randomUUID } from "node:crypto";
import type { Context, Next } from "koa";

export const API_CSP = "default-src 'none'; frame-ancestors 'none'";

export const DOCS_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  // Both UIs set inline styles at run time.
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data: blob:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "worker-src 'self' blob:",
  "frame-ancestors 'none'",
].join("; ");

/** The headers every answer starts with, in the order they are written. */
const SECURITY_HEADERS: readonly (readonly [string, string])[] = [
  ["X-Content-Type-Options", "nosniff"],
  ["X-Frame-Options", "DENY"],
  ["Referrer-Policy", "no-referrer"],
  ["Cross-Origin-Opener-Policy", "same-origin"],
  ["Cross-Origin-Resource-Policy", "same-origin"],
  ["Content-Security-Policy", API_CSP],
];

function setSecurityHeaders(ctx: Context): void {
  // Node's own setHeader, not Koa's `ctx.set`: the same checks, without Koa's delegation.
  for (const [name, value] of SECURITY_HEADERS) ctx.res.setHeader(name, value);
}

/** Koa middleware setting the headers (a later layer may replace the CSP). */
export function securityHeaders(ctx: Context, next: Next): Promise<void> {
  setSecurityHeaders(ctx);
  return next();
}

/**
 * The API's first layer after the metrics: the request's id (`ctx.state.requestId`, answered as
 * X-Request-Id and logged with its errors), then the security headers. One layer for both: each
 * Koa layer is a call and a promise on every request (docs/performance.md, API).
 */
export function requestIdAndSecurityHeaders(ctx: Context, next: Next): Promise<void> {
  const requestId = randomUUID();
  ctx.state.requestId = requestId;
  ctx.res.setHeader("X-Request-Id", requestId);
  setSecurityHeaders(ctx);
  return next();
}
