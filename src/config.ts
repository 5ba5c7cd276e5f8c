// Server configuration: environment variables with defaults, plus the secrets the server
// generates on first start and keeps in the data directory (JWT secret, server encryption key,
// admin password hash). Every variable is documented in the README ("Configuration").
import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { hashSecret } from "./domain/secrets.js";
import { resolveEnginePaths } from "./engine/paths.js";

export interface OidcConfig {
  issuer: string;
  audience: string;
  jwksUrl: string;
}

export interface Config {
  dataDir: string;
  /** SQLite file of the store. */
  dbFile: string;
  /** Sounds directory (IVR greetings under `greetings/`): PBX_SOUNDS_DIR, else <data-dir>/sounds. */
  soundsDir: string;
  /** Call recordings (`<org id>/<uniqueid>.wav`): PBX_RECORDINGS_DIR, else <data-dir>/recordings. */
  recordingsDir: string;
  port: number;
  host: string;
  /** Public address of the server, without `/api/v1` (second OpenAPI server). */
  baseUrl: string;
  /** Base address of the external auto-ticket intake service, when configured. */
  eventsUrl: string | null;
  adminUsername: string;
  /** scrypt hash of the admin password. */
  adminPasswordHash: string;
  /** Set only on the start that generated it, so the caller can print it once. */
  generatedAdminPassword: string | null;
  /** Null disables `X-Internal-Key` authentication. */
  internalKey: string | null;
  jwtSecret: Uint8Array;
  /** 32 bytes: AES-256-GCM key sealing the org keys. */
  serverKey: Buffer;
  oidc: OidcConfig | null;
  logLevel: string;
  /** Largest accepted request body (bytes or `1mb`-style). */
  bodyLimit: string;
  /**
   * Longest greeting text (characters) `generate-greeting` accepts: PBX_GREETING_MAX_CHARS.
   * Null (unset) keeps SPEC.md §8's "no cap".
   */
  greetingMaxChars: number | null;
  /** Host of the trunk auto-provisioned when an org request is approved. */
  defaultTrunkHost: string;
  /** PBX_WEBHOOK_ALLOW_PRIVATE=1 (or `true`): webhook targets on private ranges are allowed. */
  webhookAllowPrivate: boolean;
  /** PBX_METRICS_LISTEN: where a second listener serves `/metrics` with no auth; null: none. */
  metricsListen: ListenAddress | null;
}

export interface ListenAddress {
  host: string;
  port: number;
}

export interface ConfigOverrides {
  dataDir?: string;
  port?: number;
  host?: string;
}

const FILES = {
  jwtSecret: "jwt-secret",
  serverKey: "server-key",
  adminPassword: "admin-password.hash",
} as const;

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === "" ? undefined : value.trim();
}

/** `1` or `true` (any case): a switch that is on. */
function isOn(value: string | undefined): boolean {
  const text = nonEmpty(value)?.toLowerCase();
  return text === "1" || text === "true";
}

/**
 * Whether webhook targets on private and loopback ranges are allowed (PBX_WEBHOOK_ALLOW_PRIVATE).
 * One reading for the server and for `pbxctl apply`, so a file the server would accept applies.
 */
export function webhookAllowPrivateFrom(env: NodeJS.ProcessEnv): boolean {
  return isOn(env.PBX_WEBHOOK_ALLOW_PRIVATE);
}

function parsePort(value: string | number | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  const port = Number(value);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new Error(`invalid port: ${value} (need an integer 0-65535)`);
  }
  return port;
}

/** `host:port`, `[v6]:port`, or a bare port (on 127.0.0.1): PBX_METRICS_LISTEN. */
function parseListen(value: string | undefined): ListenAddress | null {
  const text = nonEmpty(value);
  if (text === undefined) return null;
  const match = /^(?:(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]+):)?(\d{1,5})$/.exec(text);
  const port = match ? Number(match[2]) : Number.NaN;
  if (!match || port > 65535) {
    throw new Error(
      `invalid PBX_METRICS_LISTEN: ${text} (need host:port, e.g. 127.0.0.1:9464, or a port)`,
    );
  }
  return { host: match[1]?.replace(/^\[|\]$/g, "") ?? "127.0.0.1", port };
}

function parseCharacterCap(value: string | undefined): number | null {
  const text = nonEmpty(value);
  if (text === undefined) return null;
  const cap = Number(text);
  if (!Number.isSafeInteger(cap) || cap < 1) {
    throw new Error(
      `invalid PBX_GREETING_MAX_CHARS: ${text} (need a whole number of characters >= 1)`,
    );
  }
  return cap;
}

/** Reads `name` in the data dir, or writes `make()` there (mode 0600) and returns it. */
function persisted(
  dataDir: string,
  name: string,
  make: () => string,
): { value: string; created: boolean } {
  const file = join(dataDir, name);
  if (existsSync(file)) return { value: readFileSync(file, "utf8").trim(), created: false };
  const value = make();
  writeFileSync(file, `${value}\n`, { mode: 0o600, flag: "wx" });
  return { value, created: true };
}

/**
 * The configuration from `env` and command-line overrides (which win). Creates the data dir and
 * the generated secrets on first use.
 */
export function loadConfig(env: NodeJS.ProcessEnv, overrides: ConfigOverrides = {}): Config {
  const dataDir = resolve(overrides.dataDir ?? nonEmpty(env.PBX_DATA_DIR) ?? "./var");
  mkdirSync(dataDir, { recursive: true });
  const port = parsePort(overrides.port ?? nonEmpty(env.PBX_PORT), 3000);
  const host = overrides.host ?? nonEmpty(env.PBX_HOST) ?? "127.0.0.1";

  const jwtSecret =
    nonEmpty(env.PBX_JWT_SECRET) ??
    persisted(dataDir, FILES.jwtSecret, () => randomBytes(32).toString("base64url")).value;
  const serverKeyHex = persisted(dataDir, FILES.serverKey, () =>
    randomBytes(32).toString("hex"),
  ).value;
  const serverKey = Buffer.from(serverKeyHex, "hex");
  if (serverKey.length !== 32)
    throw new Error(`${join(dataDir, FILES.serverKey)} must hold 64 hex characters`);

  let generatedAdminPassword: string | null = null;
  const envPassword = nonEmpty(env.PBX_ADMIN_PASSWORD);
  const adminPasswordHash = envPassword
    ? hashSecret(envPassword)
    : persisted(dataDir, FILES.adminPassword, () => {
        generatedAdminPassword = randomBytes(18).toString("base64url");
        return hashSecret(generatedAdminPassword);
      }).value;

  const issuer = nonEmpty(env.PBX_OIDC_ISSUER);
  const audience = nonEmpty(env.PBX_OIDC_AUDIENCE);
  const jwksUrl = nonEmpty(env.PBX_OIDC_JWKS_URL);
  const oidc = issuer && audience && jwksUrl ? { issuer, audience, jwksUrl } : null;

  const displayHost = host === "0.0.0.0" || host === "::" ? "127.0.0.1" : host;
  return {
    dataDir,
    dbFile: join(dataDir, "pbx.db"),
    soundsDir: resolveEnginePaths(env, dataDir).soundsDir,
    recordingsDir: resolveEnginePaths(env, dataDir).recordingsDir,
    port,
    host,
    baseUrl: (nonEmpty(env.PBX_BASE_URL) ?? `http://${displayHost}:${port}`).replace(/\/+$/, ""),
    eventsUrl: nonEmpty(env.PBX_EVENTS_URL)?.replace(/\/+$/, "") ?? null,
    adminUsername: nonEmpty(env.PBX_ADMIN_USERNAME) ?? "admin",
    adminPasswordHash,
    generatedAdminPassword,
    internalKey: nonEmpty(env.PBX_INTERNAL_KEY) ?? null,
    jwtSecret: new TextEncoder().encode(jwtSecret),
    serverKey,
    oidc,
    logLevel: nonEmpty(env.LOG_LEVEL) ?? "info",
    bodyLimit: nonEmpty(env.PBX_BODY_LIMIT) ?? "1mb",
    defaultTrunkHost: nonEmpty(env.PBX_DEFAULT_TRUNK_HOST) ?? "127.0.0.1",
    greetingMaxChars: parseCharacterCap(env.PBX_GREETING_MAX_CHARS),
    webhookAllowPrivate: webhookAllowPrivateFrom(env),
    metricsListen: parseListen(env.PBX_METRICS_LISTEN),
  };
}
