// The two signatures of a delivery, over the exact body bytes that are sent.
import { createHmac } from "node:crypto";
import { standardWebhooksKey } from "./secrets.js";

/** `sha256=<hex HMAC-SHA256 of body>` keyed with the secret's UTF-8 bytes (SPEC.md §6). */
export function pbxSignature(body: string, secret: string): string {
  return `sha256=${createHmac("sha256", secret).update(body, "utf8").digest("hex")}`;
}

/** `v1,<base64 HMAC-SHA256 of "{id}.{timestamp}.{body}">` (Standard Webhooks). */
export function standardWebhooksSignature(
  messageId: string,
  timestampSeconds: number,
  body: string,
  secret: string,
): string {
  const mac = createHmac("sha256", standardWebhooksKey(secret))
    .update(`${messageId}.${timestampSeconds}.${body}`, "utf8")
    .digest("base64");
  return `v1,${mac}`;
}
