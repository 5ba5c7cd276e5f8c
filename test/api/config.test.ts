// Server configuration: defaults, overrides, and secrets generated once and kept.
import { spawn } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { apiSettingsOf } from "../../src/api/deps.js";
import {
  asteriskDirIsSet,
  dataDirFrom,
  edgeSettingsFrom,
  gatewayOptionsFrom,
  intakeSettingsFrom,
  loadConfig,
  resolveGitopsEngineDir,
} from "../../src/config.js";
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
    assert.is(config.edge, null, "no SIP edge unless PBX_EDGE_DIR says where it is");
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

test("PBX_EDGE_*: no edge unless PBX_EDGE_DIR; its port and carriers checked", () => {
  assert.is(edgeSettingsFrom({}), null, "no edge by default");
  assert.equal(edgeSettingsFrom({ PBX_EDGE_DIR: "/etc/kamailio/pbxctl" }), {
    dir: "/etc/kamailio/pbxctl",
    rpcPort: 5081,
    carriers: [],
  });
  assert.equal(
    edgeSettingsFrom({
      PBX_EDGE_DIR: "/etc/kamailio/pbxctl",
      PBX_EDGE_RPC_PORT: "5090",
      PBX_EDGE_CARRIERS: " 192.0.2.10, 198.51.100.0/24 ,",
    }),
    { dir: "/etc/kamailio/pbxctl", rpcPort: 5090, carriers: ["192.0.2.10", "198.51.100.0/24"] },
  );
  const refused = (env: Record<string, string>, message: string) =>
    assert.throws(
      () => edgeSettingsFrom(env),
      (error: Error) => error.message === message,
    );
  refused({ PBX_EDGE_DIR: "edge" }, "invalid PBX_EDGE_DIR: edge (need an absolute path)");
  refused(
    { PBX_EDGE_DIR: "/e", PBX_EDGE_RPC_PORT: "0" },
    "invalid PBX_EDGE_RPC_PORT: 0 (need an integer 1-65535)",
  );
  refused(
    { PBX_EDGE_CARRIERS: "192.0.2.10" },
    "PBX_EDGE_CARRIERS is set but PBX_EDGE_DIR is not: set both, or neither",
  );
});

test("the data and engine directories: a flag, else the environment, else the defaults", () => {
  assert.is(dataDirFrom({}), resolve("./var"));
  assert.is(dataDirFrom({ PBX_DATA_DIR: "/srv/pbx" }), "/srv/pbx");
  assert.is(dataDirFrom({ PBX_DATA_DIR: "/srv/pbx" }, "/flag"), "/flag");
  assert.is(dataDirFrom({ PBX_DATA_DIR: "  " }), resolve("./var"));
  assert.is(resolveGitopsEngineDir({}), resolve("./var/gitops-asterisk"));
  assert.is(resolveGitopsEngineDir({ PBX_ASTERISK_DIR: "/etc/pbx" }), "/etc/pbx");
  assert.is(asteriskDirIsSet({}), false);
  assert.is(asteriskDirIsSet({ PBX_ASTERISK_DIR: "/etc/pbx" }), true);
});

test("PBX_ENVIRONMENT / PBX_STAGING_ENDPOINT: the gateway's deployment, checked", () => {
  assert.equal(gatewayOptionsFrom({}), { environment: "prod", staging_endpoint: "staging-tunnel" });
  assert.equal(
    gatewayOptionsFrom({ PBX_ENVIRONMENT: "staging", PBX_STAGING_ENDPOINT: "tunnel_2" }),
    { environment: "staging", staging_endpoint: "tunnel_2" },
  );
  assert.throws(
    () => gatewayOptionsFrom({ PBX_ENVIRONMENT: "qa" }),
    /PBX_ENVIRONMENT must be one of .*, got "qa"/,
  );
  assert.throws(
    () => gatewayOptionsFrom({ PBX_STAGING_ENDPOINT: "a;b" }),
    /PBX_STAGING_ENDPOINT must be letters, digits, _ or - \(got "a;b"\)/,
  );
});

test("PBX_INTAKE_PORT / PBX_API_URL: the intake's port (3001) and API address", () => {
  assert.equal(intakeSettingsFrom({}), { port: 3001, apiUrl: undefined });
  assert.equal(
    intakeSettingsFrom({ PBX_INTAKE_PORT: " 4001 ", PBX_API_URL: " http://api:3000 " }),
    { port: 4001, apiUrl: "http://api:3000" },
  );
});

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

test("a chosen admin password is hashed by its first reader, once (not by loadConfig: serve's start-up)", () =>
  withDir((dir) => {
    const config = loadConfig({ PBX_ADMIN_PASSWORD: "chosen" }, { dataDir: dir });
    const property = Object.getOwnPropertyDescriptor(config, "adminPasswordHash");
    assert.type(property?.get, "function", "computed when read, not when loaded");
    const hash = config.adminPasswordHash;
    assert.is(config.adminPasswordHash, hash, "the same hash on every read");
    assert.ok(verifySecret("chosen", hash));
  }));

test("the settings handed to use cases hold no JWT secret and leave the admin hash lazy", () =>
  withDir((dir) => {
    const config = loadConfig({ PBX_ADMIN_PASSWORD: "chosen" }, { dataDir: dir });
    const settings = apiSettingsOf(config);
    assert.not.ok("jwtSecret" in settings, "the token service holds the JWT secret, no use case");
    assert.not.ok("store" in settings, "nor where the database is");
    assert.not.ok("generatedAdminPassword" in settings);
    const property = Object.getOwnPropertyDescriptor(settings, "adminPasswordHash");
    assert.type(property?.get, "function", "still computed when read, not when the app is built");
    assert.ok(verifySecret("chosen", settings.adminPasswordHash));
    assert.is(settings.serverKey, config.serverKey);
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

test("replicas starting at once on one data dir all end up with the same secrets", async () => {
  const dir = mkdtempSync(join(tmpdir(), "pbx-config-"));
  try {
    const config = new URL("../../src/config.ts", import.meta.url).href;
    const script =
      `const { loadConfig } = await import(${JSON.stringify(config)});` +
      `const c = loadConfig({}, { dataDir: ${JSON.stringify(dir)} });` +
      `console.log(JSON.stringify([Buffer.from(c.jwtSecret).toString("hex"), c.serverKey.toString("hex"), c.adminPasswordHash]));`;
    const outputs = await Promise.all(
      Array.from(
        { length: 4 },
        () =>
          new Promise<string>((resolve, reject) => {
            const child = spawn(process.execPath, [
              "--import",
              "tsx",
              "--input-type=module",
              "-e",
              script,
            ]);
            let out = "";
            let err = "";
            child.stdout.on("data", (chunk: Buffer) => (out += chunk.toString()));
            child.stderr.on("data", (chunk: Buffer) => (err += chunk.toString()));
            child.on("exit", (code) => (code === 0 ? resolve(out.trim()) : reject(new Error(err))));
          }),
      ),
    );
    assert.is(new Set(outputs).size, 1, outputs.join("\n"));
    assert.equal(
      readdirSync(dir).sort(),
      ["admin-password.hash", "jwt-secret", "server-key"],
      "no temporary file left",
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("PBX_SERVER_KEY gives replicas with their own data dirs one server key; PBX_REPLICA_ID names them", () =>
  withDir((dir) => {
    const key = "ab".repeat(32);
    const config = loadConfig({ PBX_SERVER_KEY: key, PBX_REPLICA_ID: "api-2" }, { dataDir: dir });
    assert.is(config.serverKey.toString("hex"), key);
    assert.is(config.replicaId, "api-2");
    assert.not.ok(readdirSync(dir).includes("server-key"), "none generated");
    assert.throws(
      () => loadConfig({ PBX_SERVER_KEY: "xyz" }, { dataDir: dir }),
      /PBX_SERVER_KEY must hold 64 hex characters/,
    );
    assert.match(loadConfig({}, { dataDir: dir }).replicaId, /^.+-\d+-[0-9a-f]{6}$/);
  }));

test.run();
