// Server configuration: defaults, overrides, and secrets generated once and kept.
import { mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { loadConfig } from "../../src/config.js";
import { verifySecret } from "../../src/domain/secrets.js";

function withDir(run: (dir: string) => void): void {
  const dir = mkdtempSync(join(tmpdir(), "pbx-config-"));
  try {
    run(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

test("defaults", () =>
  withDir((dir) => {
    const config = loadConfig({ PBX_DATA_DIR: dir });
    assert.is(config.port, 3000);
    assert.is(config.host, "127.0.0.1");
    assert.is(config.baseUrl, "http://127.0.0.1:3000");
    assert.is(config.adminUsername, "admin");
    assert.is(config.internalKey, null);
    assert.is(config.oidc, null);
    assert.is(config.eventsUrl, null);
    assert.is(config.logLevel, "info");
    assert.is(config.dbFile, join(dir, "pbx.db"));
    assert.is(config.metricsListen, null, "no metrics listener unless asked for");
  }));

test("PBX_METRICS_LISTEN: host:port, [v6]:port or a port on loopback; anything else refused", () =>
  withDir((dir) => {
    const listen = (value: string) =>
      loadConfig({ PBX_DATA_DIR: dir, PBX_METRICS_LISTEN: value }).metricsListen;
    assert.equal(listen("127.0.0.1:9464"), { host: "127.0.0.1", port: 9464 });
    assert.equal(listen("[::1]:9464"), { host: "::1", port: 9464 });
    assert.equal(listen("9464"), { host: "127.0.0.1", port: 9464 });
    assert.equal(listen("metrics.internal:9100"), { host: "metrics.internal", port: 9100 });
    for (const bad of ["127.0.0.1", "127.0.0.1:99999", "http://127.0.0.1:9464", "a b:1"]) {
      assert.throws(
        () => listen(bad),
        (error: Error) =>
          error.message ===
          `invalid PBX_METRICS_LISTEN: ${bad} (need host:port, e.g. 127.0.0.1:9464, or a port)`,
        bad,
      );
    }
  }));

test("flags override the environment", () =>
  withDir((dir) => {
    const config = loadConfig(
      {
        PBX_PORT: "4000",
        PBX_HOST: "0.0.0.0",
        PBX_DATA_DIR: "/nonexistent",
        PBX_BASE_URL: "https://pbx.example/",
      },
      { port: 5000, dataDir: dir },
    );
    assert.is(config.port, 5000);
    assert.is(config.host, "0.0.0.0");
    assert.is(config.dataDir, dir);
    assert.is(config.baseUrl, "https://pbx.example");
    assert.throws(() => loadConfig({ PBX_PORT: "http" }, { dataDir: dir }), /invalid port: http/);
  }));

test("the admin password is generated once, kept only as a hash; secrets persist across starts", () =>
  withDir((dir) => {
    const first = loadConfig({}, { dataDir: dir });
    assert.ok(first.generatedAdminPassword);
    const stored = readFileSync(join(dir, "admin-password.hash"), "utf8");
    assert.not.ok(stored.includes(first.generatedAdminPassword!));
    assert.ok(verifySecret(first.generatedAdminPassword!, first.adminPasswordHash));
    assert.is(statSync(join(dir, "jwt-secret")).mode & 0o777, 0o600);
    const second = loadConfig({}, { dataDir: dir });
    assert.is(second.generatedAdminPassword, null, "printed once only");
    assert.is(second.adminPasswordHash, first.adminPasswordHash);
    assert.equal(second.jwtSecret, first.jwtSecret);
    assert.equal(second.serverKey, first.serverKey);
    const explicit = loadConfig(
      { PBX_ADMIN_PASSWORD: "chosen", PBX_JWT_SECRET: "s3cret" },
      { dataDir: dir },
    );
    assert.ok(verifySecret("chosen", explicit.adminPasswordHash));
    assert.equal(explicit.jwtSecret, new TextEncoder().encode("s3cret"));
  }));

test("OIDC is on only when issuer, audience and JWKS address are all set", () =>
  withDir((dir) => {
    const partial = loadConfig({ PBX_OIDC_ISSUER: "https://idp" }, { dataDir: dir });
    assert.is(partial.oidc, null);
    const full = loadConfig(
      {
        PBX_OIDC_ISSUER: "https://idp",
        PBX_OIDC_AUDIENCE: "pbx",
        PBX_OIDC_JWKS_URL: "https://idp/jwks",
      },
      { dataDir: dir },
    );
    assert.equal(full.oidc, {
      issuer: "https://idp",
      audience: "pbx",
      jwksUrl: "https://idp/jwks",
    });
  }));

test.run();
