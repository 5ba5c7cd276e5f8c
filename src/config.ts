// Server configuration: environment variables with defaults, plus the secrets the server
// generates on first start and keeps in the data directory (JWT secret, server encryption key,
// admin password hash). Every variable is documented in the README ("Configuration").
import { randomBytes } from "node:crypto";
import { existsSync, linkSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import { join, resolve } from "node:path";
import { hashSecret } from "./domain/secrets.js";
import type { AmiConnectionOptions } from "./engine/ami-connection.js";
import { DEFAULT_DATA_DIR, DEFAULT_GITOPS_ENGINE_DIR, type EnginePaths } from "./engine/paths.js";
import { ENGINE_KINDS, EngineConfigError, type EngineKind } from "./engine/target.js";
import type { GatewayOptions } from "./model/gateway.js";
import { GatewayStateSchema, ROUTING_ENVIRONMENTS } from "./model/org-state.js";
import { TtsEngineError } from "./tts/errors.js";

type Env = Readonly<Record<string, string | undefined>>;

export interface OidcConfig {
  issuer: string;
  audience: string;
  jwksUrl: string;
}

/**
 * How long the PostgreSQL store may take (docs/beyond-one-machine.md, "Timeouts"): a database
 * host that silently drops packets would otherwise hang a connect or a query for the minutes TCP
 * takes to give up, shutdown included.
 */
export interface DatabaseTimeouts {
  /** Opening a connection, or waiting for a free one of the pool (PBX_DATABASE_CONNECT_TIMEOUT_MS). */
  connectMs: number;
  /**
   * One statement, and a transaction left idle (PBX_DATABASE_STATEMENT_TIMEOUT_MS); 0: none.
   * The client gives up a little after the server would, on a server that never answers.
   */
  statementMs: number;
}

/**
 * Where the store lives: the embedded SQLite file of the data directory, or a PostgreSQL
 * database (PBX_DATABASE_URL) reached through a pool of `poolSize` connections per process, with
 * its timeouts (default DEFAULT_DATABASE_TIMEOUTS).
 */
export type StoreLocation =
  | { kind: "sqlite"; file: string }
  | { kind: "postgres"; url: string; poolSize: number; timeouts?: Partial<DatabaseTimeouts> };

export interface Config {
  dataDir: string;
  /** SQLite file of the data directory (the store unless PBX_DATABASE_URL is set). */
  dbFile: string;
  /** The store this process opens: PBX_DATABASE_URL when set, else `dbFile`. */
  store: StoreLocation;
  /** Sounds directory (IVR greetings under `greetings/`): PBX_SOUNDS_DIR, else <data-dir>/sounds. */
  soundsDir: string;
  /** Call recordings (`<org id>/<uniqueid>.wav`): PBX_RECORDINGS_DIR, else <data-dir>/recordings. */
  recordingsDir: string;
  /** Engine nodes' directories (`<nodes>/<node name>`): PBX_NODES_DIR, else <data-dir>/nodes. */
  nodesDir: string;
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
  /**
   * This process's name among the replicas sharing the store (leases, `/health`):
   * PBX_REPLICA_ID, else `<host name>-<pid>-<random>` (a restarted replica is a new holder).
   */
  replicaId: string;
  /** PBX_METRICS_LISTEN: where a second listener serves `/metrics` with no auth; null: none. */
  metricsListen: ListenAddress | null;
  /** PBX_PJSIP: PJSIP objects in files (default) or as rows of the PostgreSQL store. */
  pjsipMode: PjsipMode;
  /** PBX_EDGE_*: the Kamailio SIP edge in front of the engine nodes; null: none. */
  edge: EdgeSettings | null;
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

/** Connections one process opens to PostgreSQL at most, unless PBX_DATABASE_POOL_SIZE says. */
export const DEFAULT_DATABASE_POOL_SIZE = 10;

/**
 * The PostgreSQL timeouts unless PBX_DATABASE_CONNECT_TIMEOUT_MS / PBX_DATABASE_STATEMENT_TIMEOUT_MS
 * say: a connect (or a wait for a pooled connection) of 5 s, many round trips to a database that
 * answers at all; a statement of 60 s, far beyond any request's (listings are paged, by org, on
 * indexes: TARGETS p95 < 50 ms at a million records), while migrations and `db copy`, whose
 * statements may legitimately run for minutes, run with none (src/store/database.ts).
 */
export const DEFAULT_DATABASE_TIMEOUTS: DatabaseTimeouts = {
  connectMs: 5_000,
  statementMs: 60_000,
};

/** A whole number of milliseconds from `name` within [min, max] (or 0, when it means something). */
function millisecondsFrom(
  env: NodeJS.ProcessEnv,
  name: string,
  fallback: number,
  range: { min: number; max: number; zeroMeans?: string },
): number {
  const text = nonEmpty(env[name]);
  if (text === undefined) return fallback;
  const value = /^[0-9]+$/.test(text) ? Number(text) : Number.NaN;
  if (range.zeroMeans !== undefined && value === 0) return 0;
  if (!Number.isSafeInteger(value) || value < range.min || value > range.max) {
    const zero = range.zeroMeans !== undefined ? ` or 0 for ${range.zeroMeans}` : "";
    throw new Error(
      `invalid ${name}: ${text} (need a whole number of milliseconds ${range.min}-${range.max}${zero})`,
    );
  }
  return value;
}

/** PBX_DATABASE_CONNECT_TIMEOUT_MS / PBX_DATABASE_STATEMENT_TIMEOUT_MS, checked. */
export function databaseTimeoutsFrom(env: NodeJS.ProcessEnv): DatabaseTimeouts {
  return {
    connectMs: millisecondsFrom(
      env,
      "PBX_DATABASE_CONNECT_TIMEOUT_MS",
      DEFAULT_DATABASE_TIMEOUTS.connectMs,
      { min: 100, max: 600_000 },
    ),
    statementMs: millisecondsFrom(
      env,
      "PBX_DATABASE_STATEMENT_TIMEOUT_MS",
      DEFAULT_DATABASE_TIMEOUTS.statementMs,
      { min: 100, max: 86_400_000, zeroMeans: "none" },
    ),
  };
}

/** PBX_DATABASE_URL / PBX_DATABASE_POOL_SIZE / timeouts, else the data directory's SQLite file. */
export function storeLocationFrom(env: NodeJS.ProcessEnv, sqliteFile: string): StoreLocation {
  const url = nonEmpty(env.PBX_DATABASE_URL);
  const poolText = nonEmpty(env.PBX_DATABASE_POOL_SIZE);
  const poolSize = poolText === undefined ? DEFAULT_DATABASE_POOL_SIZE : Number(poolText);
  if (!Number.isSafeInteger(poolSize) || poolSize < 1 || poolSize > 1000) {
    throw new Error(
      `invalid PBX_DATABASE_POOL_SIZE: ${poolText} (need a whole number of connections 1-1000)`,
    );
  }
  const timeouts = databaseTimeoutsFrom(env);
  if (url === undefined) return { kind: "sqlite", file: sqliteFile };
  if (!/^postgres(ql)?:\/\//i.test(url)) {
    throw new Error("invalid PBX_DATABASE_URL: need a postgres:// or postgresql:// URL");
  }
  return { kind: "postgres", url, poolSize, timeouts };
}

/**
 * Where Asterisk reads PJSIP endpoints, auths and AORs from (PBX_PJSIP): `file` (the default)
 * writes them into each org's pjsip.conf and reloads res_pjsip; `realtime` keeps them as rows of
 * the store's `ps_*` tables, which Asterisk reads itself (docs/engine.md), so it needs the
 * PostgreSQL store.
 */
export type PjsipMode = "file" | "realtime";

/** PBX_PJSIP, checked against PBX_DATABASE_URL. */
export function pjsipModeFrom(env: Readonly<Record<string, string | undefined>>): PjsipMode {
  const mode = nonEmpty(env.PBX_PJSIP) ?? "file";
  if (mode !== "file" && mode !== "realtime") {
    throw new Error(`invalid PBX_PJSIP: "${mode}" (need file or realtime)`);
  }
  if (mode === "realtime" && nonEmpty(env.PBX_DATABASE_URL) === undefined) {
    throw new Error(
      "PBX_PJSIP=realtime needs PBX_DATABASE_URL: Asterisk reads the PJSIP rows from the PostgreSQL store (set PBX_DATABASE_URL, or use PBX_PJSIP=file)",
    );
  }
  return mode;
}

/**
 * The Kamailio SIP edge in front of the engine nodes (issue 26, docs/beyond-one-machine.md "The SIP edge").
 * Its presence is the platform's "phones register through an edge": phones' AORs get
 * `support_path=yes`, and `serve` keeps the edge's tables in step with the store.
 */
export interface EdgeSettings {
  /** PBX_EDGE_DIR: the edge's directory on this host (absolute), as `pbxctl edge init --dir`. */
  dir: string;
  /** PBX_EDGE_RPC_PORT: its JSON-RPC over HTTP, on 127.0.0.1 (default 5081, edge init's). */
  rpcPort: number;
  /** PBX_EDGE_CARRIERS: the gateway's carriers' addresses or CIDR ranges, comma-separated. */
  carriers: string[];
}

/** The edge's JSON-RPC port unless PBX_EDGE_RPC_PORT says (the same as `edge init`'s default). */
export const DEFAULT_EDGE_RPC_PORT = 5081;

/** PBX_EDGE_DIR / PBX_EDGE_RPC_PORT / PBX_EDGE_CARRIERS; null when PBX_EDGE_DIR is unset. */
export function edgeSettingsFrom(
  env: Readonly<Record<string, string | undefined>>,
): EdgeSettings | null {
  const dir = nonEmpty(env.PBX_EDGE_DIR);
  if (dir === undefined) {
    for (const name of ["PBX_EDGE_RPC_PORT", "PBX_EDGE_CARRIERS"] as const) {
      if (nonEmpty(env[name]) !== undefined) {
        throw new Error(`${name} is set but PBX_EDGE_DIR is not: set both, or neither`);
      }
    }
    return null;
  }
  if (!dir.startsWith("/")) {
    throw new Error(`invalid PBX_EDGE_DIR: ${dir} (need an absolute path)`);
  }
  const portText = nonEmpty(env.PBX_EDGE_RPC_PORT);
  const rpcPort = portText === undefined ? DEFAULT_EDGE_RPC_PORT : Number(portText);
  if (!Number.isInteger(rpcPort) || rpcPort < 1 || rpcPort > 65535) {
    throw new Error(`invalid PBX_EDGE_RPC_PORT: ${portText} (need an integer 1-65535)`);
  }
  const carriers = (nonEmpty(env.PBX_EDGE_CARRIERS) ?? "")
    .split(",")
    .map((carrier) => carrier.trim())
    .filter((carrier) => carrier !== "");
  return { dir, rpcPort, carriers };
}

/** The data directory: the `flag` when given, else PBX_DATA_DIR, else ./var; absolute. */
export function dataDirFrom(env: Env, flag?: string): string {
  return resolve(flag ?? nonEmpty(env.PBX_DATA_DIR) ?? DEFAULT_DATA_DIR);
}

/**
 * The engine paths of the data directory `dataDir` (default: dataDirFrom): `<data-dir>/asterisk`
 * unless PBX_ASTERISK_DIR, `<data-dir>/sounds` unless PBX_SOUNDS_DIR, `<data-dir>/recordings`
 * unless PBX_RECORDINGS_DIR, `<data-dir>/nodes` unless PBX_NODES_DIR; absolute. One function, so
 * the server, the CLI and the deployer agree.
 */
export function resolveEnginePaths(env: Env, dataDir: string = dataDirFrom(env)): EnginePaths {
  return {
    asteriskDir: resolve(nonEmpty(env.PBX_ASTERISK_DIR) ?? join(dataDir, "asterisk")),
    soundsDir: resolve(nonEmpty(env.PBX_SOUNDS_DIR) ?? join(dataDir, "sounds")),
    recordingsDir: resolve(nonEmpty(env.PBX_RECORDINGS_DIR) ?? join(dataDir, "recordings")),
    nodesDir: resolve(nonEmpty(env.PBX_NODES_DIR) ?? join(dataDir, "nodes")),
  };
}

/** Whether PBX_ASTERISK_DIR names the engine directory (else each command's default). */
export function asteriskDirIsSet(env: Env): boolean {
  return nonEmpty(env.PBX_ASTERISK_DIR) !== undefined;
}

/** The engine directory of the store-less commands (deploy, status --etc, rollback). */
export function resolveGitopsEngineDir(env: Env): string {
  return resolve(nonEmpty(env.PBX_ASTERISK_DIR) ?? DEFAULT_GITOPS_ENGINE_DIR);
}

/** The engine kind named by `override` or PBX_ENGINE (default `none`); throws on an unknown one. */
export function engineKindFrom(env: Env, override?: string): EngineKind {
  const kind = override ?? env.PBX_ENGINE ?? "none";
  if (!(ENGINE_KINDS as readonly string[]).includes(kind)) {
    throw new EngineConfigError(
      `unknown engine "${kind}": PBX_ENGINE must be one of ${ENGINE_KINDS.join(", ")}`,
    );
  }
  return kind as EngineKind;
}

/** AMI connection settings from PBX_AMI_HOST (127.0.0.1), PBX_AMI_PORT (5038), user, secret. */
export function amiOptionsFrom(env: Env): AmiConnectionOptions {
  const port = Number(env.PBX_AMI_PORT ?? 5038);
  if (!Number.isInteger(port) || port < 1 || port > 65535) {
    throw new EngineConfigError(`PBX_AMI_PORT must be a port number, got "${env.PBX_AMI_PORT}"`);
  }
  const username = env.PBX_AMI_USERNAME;
  const secret = env.PBX_AMI_SECRET;
  if (!username || !secret) {
    throw new EngineConfigError("the ami engine needs PBX_AMI_USERNAME and PBX_AMI_SECRET");
  }
  return { host: env.PBX_AMI_HOST || "127.0.0.1", port, username, secret };
}

/** The engine to drive: files only, or an Asterisk reached over AMI with these settings. */
export type EngineSettings = { kind: "none" } | { kind: "ami"; ami: AmiConnectionOptions };

/** The engine named by `override` or PBX_ENGINE, with its PBX_AMI_* settings when it is `ami`. */
export function engineSettingsFrom(env: Env, override?: string): EngineSettings {
  return engineKindFrom(env, override) === "ami"
    ? { kind: "ami", ami: amiOptionsFrom(env) }
    : { kind: "none" };
}

/** The gateway's deployment from PBX_ENVIRONMENT (prod) and PBX_STAGING_ENDPOINT (staging-tunnel). */
export function gatewayOptionsFrom(env: Env): GatewayOptions {
  const environment = env.PBX_ENVIRONMENT || "prod";
  if (!(ROUTING_ENVIRONMENTS as readonly string[]).includes(environment)) {
    throw new EngineConfigError(
      `PBX_ENVIRONMENT must be one of ${ROUTING_ENVIRONMENTS.join(", ")}, got "${environment}"`,
    );
  }
  const endpoint = env.PBX_STAGING_ENDPOINT || "staging-tunnel";
  const pattern = new RegExp(GatewayStateSchema.properties.staging_endpoint.pattern ?? "");
  if (!pattern.test(endpoint)) {
    throw new EngineConfigError(
      `PBX_STAGING_ENDPOINT must be letters, digits, _ or - (got "${endpoint}")`,
    );
  }
  return { environment: environment as GatewayOptions["environment"], staging_endpoint: endpoint };
}

/** PBX_PROGRESS=plain: one progress line per step where no terminal shows listr2's. */
export function plainProgressFrom(env: Env): boolean {
  return env.PBX_PROGRESS === "plain";
}

/** The speech engines PBX_TTS_ENGINE may name. */
export const TTS_ENGINE_NAMES = ["espeak", "google"] as const;
export type TtsEngineName = (typeof TTS_ENGINE_NAMES)[number];

/** PBX_TTS_ENGINE; unset or empty means `espeak`; anything else unknown throws. */
export function ttsEngineFrom(env: Env): TtsEngineName {
  const value = (env.PBX_TTS_ENGINE ?? "").trim().toLowerCase() || "espeak";
  if (!(TTS_ENGINE_NAMES as readonly string[]).includes(value)) {
    throw new TtsEngineError(
      `Unknown PBX_TTS_ENGINE '${env.PBX_TTS_ENGINE}' (expected ${TTS_ENGINE_NAMES.join(" or ")})`,
    );
  }
  return value as TtsEngineName;
}

/** `intake serve`'s port and API address: PBX_INTAKE_PORT (3001) and PBX_API_URL, when set. */
export function intakeSettingsFrom(env: Env): { port: number; apiUrl: string | undefined } {
  const port = nonEmpty(env.PBX_INTAKE_PORT);
  return { port: port ? Number(port) : 3001, apiUrl: nonEmpty(env.PBX_API_URL) };
}

/**
 * The store of the data directory `dataDir` (else PBX_DATA_DIR, else ./var), for commands that
 * need only the store: PBX_DATABASE_URL when set, else that directory's pbx.db.
 */
export function dataDirStore(env: NodeJS.ProcessEnv, dataDir: string | undefined): StoreLocation {
  const dir = dataDirFrom(env, dataDir);
  return storeLocationFrom(env, join(dir, "pbx.db"));
}

/**
 * Reads `name` in the data dir, or writes `make()` there (mode 0600) and returns it. Replicas
 * sharing one data dir may start at the same moment: the value is written whole to a file of
 * this process's own and then hard-linked into place, which succeeds for exactly one of them;
 * the others read the winner's value, so every replica ends up with the same secret.
 */
function persisted(
  dataDir: string,
  name: string,
  make: () => string,
): { value: string; created: boolean } {
  const file = join(dataDir, name);
  if (existsSync(file)) return { value: readFileSync(file, "utf8").trim(), created: false };
  const value = make();
  const own = join(dataDir, `.${name}.${process.pid}.${randomBytes(4).toString("hex")}`);
  writeFileSync(own, `${value}\n`, { mode: 0o600, flag: "wx" });
  try {
    linkSync(own, file);
    return { value, created: true };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    return { value: readFileSync(file, "utf8").trim(), created: false };
  } finally {
    rmSync(own, { force: true });
  }
}

/**
 * The server key: PBX_SERVER_KEY, else the one generated in `dataDir` (created on first use).
 * Replicas must share it (it seals the org keys in the shared store): one data dir, or the same
 * PBX_SERVER_KEY everywhere. The CLI's store commands need this alone of the configuration
 * (`loadConfig` also hashes a generated admin password on a fresh data dir: a scrypt).
 */
export function loadServerKey(env: NodeJS.ProcessEnv, dataDir: string): Buffer {
  const envServerKey = nonEmpty(env.PBX_SERVER_KEY);
  const serverKeyHex =
    envServerKey ??
    persisted(dataDir, FILES.serverKey, () => randomBytes(32).toString("hex")).value;
  const serverKey = Buffer.from(serverKeyHex, "hex");
  if (serverKey.length !== 32 || !/^[0-9a-f]{64}$/i.test(serverKeyHex)) {
    throw new Error(
      `${envServerKey ? "PBX_SERVER_KEY" : join(dataDir, FILES.serverKey)} must hold 64 hex characters`,
    );
  }
  return serverKey;
}

/**
 * The configuration from `env` and command-line overrides (which win). Creates the data dir and
 * the generated secrets on first use.
 */
export function loadConfig(env: NodeJS.ProcessEnv, overrides: ConfigOverrides = {}): Config {
  const dataDir = dataDirFrom(env, overrides.dataDir);
  const enginePaths = resolveEnginePaths(env, dataDir);
  mkdirSync(dataDir, { recursive: true });
  const port = parsePort(overrides.port ?? nonEmpty(env.PBX_PORT), 3000);
  const host = overrides.host ?? nonEmpty(env.PBX_HOST) ?? "127.0.0.1";

  const jwtSecret =
    nonEmpty(env.PBX_JWT_SECRET) ??
    persisted(dataDir, FILES.jwtSecret, () => randomBytes(32).toString("base64url")).value;
  const serverKey = loadServerKey(env, dataDir);

  let generatedAdminPassword: string | null = null;
  const envPassword = nonEmpty(env.PBX_ADMIN_PASSWORD);
  // A generated password's hash is stored at once (the password is shown this once). A chosen
  // one's hash (a scrypt, ~55 ms of CPU) only serves to compare admin logins, so its first reader
  // computes it: `serve` no longer pays for it before listening, nor any command that never
  // checks a login (docs/performance.md, start-up).
  const storedHash = envPassword
    ? null
    : persisted(dataDir, FILES.adminPassword, () => {
        generatedAdminPassword = randomBytes(18).toString("base64url");
        return hashSecret(generatedAdminPassword);
      }).value;
  let envPasswordHash: string | undefined;

  const issuer = nonEmpty(env.PBX_OIDC_ISSUER);
  const audience = nonEmpty(env.PBX_OIDC_AUDIENCE);
  const jwksUrl = nonEmpty(env.PBX_OIDC_JWKS_URL);
  const oidc = issuer && audience && jwksUrl ? { issuer, audience, jwksUrl } : null;

  const displayHost = host === "0.0.0.0" || host === "::" ? "127.0.0.1" : host;
  return {
    dataDir,
    dbFile: join(dataDir, "pbx.db"),
    store: storeLocationFrom(env, join(dataDir, "pbx.db")),
    soundsDir: enginePaths.soundsDir,
    recordingsDir: enginePaths.recordingsDir,
    nodesDir: enginePaths.nodesDir,
    port,
    host,
    baseUrl: (nonEmpty(env.PBX_BASE_URL) ?? `http://${displayHost}:${port}`).replace(/\/+$/, ""),
    eventsUrl: nonEmpty(env.PBX_EVENTS_URL)?.replace(/\/+$/, "") ?? null,
    adminUsername: nonEmpty(env.PBX_ADMIN_USERNAME) ?? "admin",
    get adminPasswordHash() {
      if (storedHash !== null) return storedHash;
      envPasswordHash ??= hashSecret(envPassword as string);
      return envPasswordHash;
    },
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
    replicaId:
      nonEmpty(env.PBX_REPLICA_ID) ??
      `${hostname()}-${process.pid}-${randomBytes(3).toString("hex")}`,
    metricsListen: parseListen(env.PBX_METRICS_LISTEN),
    pjsipMode: pjsipModeFrom(env),
    edge: edgeSettingsFrom(env),
  };
}
