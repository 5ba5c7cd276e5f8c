// Security headers on every answer. API answers are data: nothing may load or frame them. The
// documentation pages get a policy that allows only this server's own scripts and styles.
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

/** Koa middleware setting the headers (a later layer may replace the CSP). */
export async function securityHeaders(ctx: Context, next: Next): Promise<void> {
  ctx.set("X-Content-Type-Options", "nosniff");
  ctx.set("X-Frame-Options", "DENY");
  ctx.set("Referrer-Policy", "no-referrer");
  ctx.set("Cross-Origin-Opener-Policy", "same-origin");
  ctx.set("Cross-Origin-Resource-Policy", "same-origin");
  ctx.set("Content-Security-Policy", API_CSP);
  await next();
}
