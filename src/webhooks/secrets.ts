// A webhook's signing secret: stored sealed, shown masked, and turned into the HMAC keys of the
// two signatures.
//
// Key mapping (docs/webhooks.md):
// - `X-PBX-Signature` is keyed with the UTF-8 bytes of the secret exactly as configured.
// - `webhook-signature` (Standard Webhooks) is keyed with the base64-decoded part of a
//   `whsec_<base64>` secret, so `new Webhook(secret)` verifies with the secret as given; any other
//   secret is keyed with its UTF-8 bytes, which a receiver passes as
//   `new Webhook("whsec_" + Buffer.from(secret).toString("base64"))`.

/** Seals secrets at rest and opens them for signing. */
export interface SecretSealer {
  seal(plain: string): string;
  open(stored: string): string;
}

/** Stores secrets as given (tests, benches). */
export const plainSecrets: SecretSealer = { seal: (s) => s, open: (s) => s };

const STANDARD_PREFIX = "whsec_";
const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;

/** `whsec_…abcd`: enough to recognise a secret, never enough to use it. */
export function maskSecret(secret: string): string {
  const prefix = secret.startsWith(STANDARD_PREFIX) ? STANDARD_PREFIX : "";
  return `${prefix}…${secret.slice(-4)}`;
}

/** The HMAC key of the Standard Webhooks signature for `secret` (see the mapping above). */
export function standardWebhooksKey(secret: string): Buffer {
  if (secret.startsWith(STANDARD_PREFIX)) {
    const encoded = secret.slice(STANDARD_PREFIX.length);
    if (BASE64.test(encoded) && encoded.length % 4 === 0) {
      const key = Buffer.from(encoded, "base64");
      if (key.length > 0) return key;
    }
  }
  return Buffer.from(secret, "utf8");
}
