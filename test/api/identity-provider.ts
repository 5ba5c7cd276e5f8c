// A stand-in OIDC identity provider: an RSA key pair from jose, its JWKS served on a loopback
// port, and ID tokens signed with it.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { exportJWK, generateKeyPair, SignJWT } from "jose";

export const ISSUER = "https://idp.example.test";
export const AUDIENCE = "pbxctl-test";

export interface TestIdentityProvider {
  /** PBX_OIDC_* variables pointing at this provider. */
  env: Record<string, string>;
  idToken(
    claims: { sub: string; email?: string },
    options?: { audience?: string; expiresIn?: number; otherKey?: boolean },
  ): Promise<string>;
  close(): Promise<void>;
}

export async function startIdentityProvider(): Promise<TestIdentityProvider> {
  const { publicKey, privateKey } = await generateKeyPair("RS256");
  const stranger = await generateKeyPair("RS256");
  const jwk = { ...(await exportJWK(publicKey)), kid: "test-key", alg: "RS256", use: "sig" };
  const server: Server = createServer((req, res) => {
    if (req.url !== "/jwks.json") {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ keys: [jwk] }));
  });
  server.listen(0, "127.0.0.1");
  await new Promise<void>((resolve) => server.once("listening", resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    env: {
      PBX_OIDC_ISSUER: ISSUER,
      PBX_OIDC_AUDIENCE: AUDIENCE,
      PBX_OIDC_JWKS_URL: `http://127.0.0.1:${port}/jwks.json`,
    },
    async idToken(claims, options = {}) {
      const now = Math.floor(Date.now() / 1000);
      return new SignJWT({ ...claims })
        .setProtectedHeader({ alg: "RS256", kid: "test-key" })
        .setIssuer(ISSUER)
        .setAudience(options.audience ?? AUDIENCE)
        .setIssuedAt(now)
        .setExpirationTime(now + (options.expiresIn ?? 300))
        .sign(options.otherKey ? stranger.privateKey : privateKey);
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
