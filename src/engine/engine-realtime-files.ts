// The engine side of realtime PJSIP (issue 24): the files `pbxctl engine init --pjsip realtime`
// adds so Asterisk reads endpoints, auths, AORs and trunk registrations from PostgreSQL instead
// of pjsip.conf. Which objects go where: src/compiler/pjsip-realtime.ts.
//
// The driver is res_config_pgsql (res_pgsql.conf). res_odbc measured no faster at these rates
// (ASTERISK.md "Realtime PJSIP") and would need an ODBC DSN besides, and `res_odbc_transaction`
// listed by hand under `autoload = no`.
import { REALTIME_PLACEMENT, REALTIME_TABLES } from "../compiler/pjsip-realtime.js";
import { nodeRealtimeSchema } from "../model/node-realtime.js";

/** Where res_config_pgsql connects: the pieces of a `postgres://` URL. */
export interface PgConnection {
  host: string;
  port: number;
  dbname: string;
  user: string;
  password: string;
}

/** A database URL that cannot be written into res_pgsql.conf. */
export class DatabaseUrlError extends Error {
  override readonly name = "DatabaseUrlError";
}

// A config value must not hold `;` (a comment), whitespace at its ends or a control character;
// res_pgsql.conf has no quoting to carry them.
function configSafe(value: string): boolean {
  return !/[;\p{Cc}]/u.test(value) && value.trim() === value;
}
const NAME_SAFE = /^[A-Za-z0-9_.-]{1,63}$/;

/** Reads `postgres://user:password@host:port/dbname` (the form PBX_DATABASE_URL uses). */
export function parseDatabaseUrl(text: string): PgConnection {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new DatabaseUrlError("--database-url is not a URL (postgres://user:password@host/db)");
  }
  if (url.protocol !== "postgres:" && url.protocol !== "postgresql:") {
    throw new DatabaseUrlError("--database-url must start with postgres:// or postgresql://");
  }
  if (url.search || url.hash) {
    throw new DatabaseUrlError("--database-url: query parameters are not supported here");
  }
  const host = url.hostname.replace(/^\[(.*)\]$/, "$1");
  // res_config_pgsql takes `localhost` (or no host) to mean its Unix socket, not TCP.
  if (!host || host === "localhost") {
    throw new DatabaseUrlError(
      "--database-url needs a host address or name other than localhost (use 127.0.0.1)",
    );
  }
  const dbname = decodeURIComponent(url.pathname.replace(/^\//, ""));
  const user = decodeURIComponent(url.username);
  const password = decodeURIComponent(url.password);
  if (!NAME_SAFE.test(host.replace(/:/g, "."))) {
    throw new DatabaseUrlError(`--database-url: host ${JSON.stringify(host)} is not usable`);
  }
  if (!NAME_SAFE.test(dbname)) {
    throw new DatabaseUrlError("--database-url needs a database name (letters, digits, _ . -)");
  }
  if (!NAME_SAFE.test(user)) {
    throw new DatabaseUrlError("--database-url needs a user name (letters, digits, _ . -)");
  }
  // res_config_pgsql has no "no password": it logs a warning and sends `asterisk`.
  if (password === "") {
    throw new DatabaseUrlError("--database-url needs a password (postgres://user:password@...)");
  }
  if (!configSafe(password)) {
    throw new DatabaseUrlError(
      "--database-url: the password may not hold ';', control characters or edge spaces",
    );
  }
  return { host, port: url.port ? Number(url.port) : 5432, dbname, user, password };
}

/**
 * The memory cache in front of each looked-up-by-id wizard. pbxctl expires a changed object over
 * AMI (`SorceryMemoryCacheExpireObject`); the lifetimes are the backstop for an expiry that never
 * arrived: after `stale` seconds an object is refreshed in the background on its next use, after
 * `maximum` it is dropped. A refresh whose query fails finds "no object" and removes it from the
 * cache, so a database error never keeps an object alive (docs/engine.md). No
 * `full_backend_cache`: it would load every object, and the AMI expiry refuses such a cache.
 */
export const REALTIME_CACHE = { staleSeconds: 120, maximumSeconds: 900 } as const;

/** Modules realtime mode loads besides the file mode's list. */
export const REALTIME_MODULES = [
  "res_config_pgsql",
  "res_sorcery_realtime",
  "res_sorcery_memory_cache",
] as const;

// Object type -> the sorcery.conf section of the module that owns it.
const SORCERY_SECTION = {
  endpoint: "res_pjsip",
  auth: "res_pjsip",
  aor: "res_pjsip",
  registration: "res_pjsip_outbound_registration",
} as const;

/** The options realtime mode adds to the top-level pjsip.conf's `[global]` section. */
export function realtimePjsipGlobalOptions(): string[] {
  // No multi-domain: username identification then looks up the endpoint id itself first, and a
  // miss (which the cache never keeps) costs no extra query per request.
  return ["disable_multi_domain = yes"];
}

/**
 * sorcery.conf, extconfig.conf and res_pgsql.conf for realtime mode. Pure. With `nodeName` (an
 * engine node, issue 25) extconfig.conf maps each family to the node's own views
 * (`pbx_node_<name>.ps_endpoints`, src/store/node-realtime-views.ts), which show the rows of the
 * orgs placed on that node only: without it, every node would answer every org's phones.
 */
export function realtimeEngineFiles(db: PgConnection, nodeName?: string): Map<string, string> {
  const header = "; Written by `pbxctl engine init --pjsip realtime`.";
  const cache = [
    "memory_cache",
    `object_lifetime_stale=${REALTIME_CACHE.staleSeconds}`,
    `object_lifetime_maximum=${REALTIME_CACHE.maximumSeconds}`,
    "expire_on_reload=yes",
  ].join(",");
  const sections = new Map<string, string[]>();
  for (const type of ["endpoint", "auth", "aor", "registration"] as const) {
    if (REALTIME_PLACEMENT[type] !== "row") continue;
    const lines = sections.get(SORCERY_SECTION[type]) ?? [];
    const table = REALTIME_TABLES[type];
    if (type === "registration") {
      // Loaded whole when res_pjsip_outbound_registration (re)loads: an unqualified fetch.
      lines.push(`${type} = realtime,${table}`);
    } else {
      // Looked up by id only: without `allow_unqualified_fetch=no` Asterisk fetches every
      // object at start (174 s and ~1 GB at 1,000 orgs, ASTERISK.md).
      lines.push(
        `${type}/cache = ${cache}`,
        `${type} = realtime,${table},allow_unqualified_fetch=no`,
      );
    }
    sections.set(SORCERY_SECTION[type], lines);
  }
  const sorcery = [
    header,
    "; Endpoints, auths and AORs are rows looked up by id behind a memory cache; trunk",
    "; registrations are rows loaded with their module; identify, transports and globals stay in",
    "; pjsip.conf, contacts in astdb (the defaults).",
  ];
  for (const [section, lines] of sections) sorcery.push(`[${section}]`, ...lines, "");
  const extconfig = [header];
  const schema = nodeName === undefined ? null : nodeRealtimeSchema(nodeName);
  if (schema) {
    extconfig.push(
      `; Engine node ${nodeName}: the rows of the orgs placed on it only (schema ${schema}).`,
    );
  }
  extconfig.push("[settings]");
  for (const type of ["endpoint", "auth", "aor", "registration"] as const) {
    if (REALTIME_PLACEMENT[type] !== "row") continue;
    const family = REALTIME_TABLES[type];
    extconfig.push(`${family} => pgsql,general${schema ? `,${schema}.${family}` : ""}`);
  }
  extconfig.push("");
  const pgsql = [
    header,
    "; res_config_pgsql: one connection, every realtime query in series.",
    "[general]",
    `hostname = ${db.host}`,
    `port = ${db.port}`,
    `dbname = ${db.dbname}`,
    `user = ${db.user}`,
    `password = ${db.password}`,
    "appname = asterisk",
    // pbxctl owns the tables: never let Asterisk alter them.
    "requirements = warn",
    "",
  ];
  return new Map([
    ["sorcery.conf", sorcery.join("\n")],
    ["extconfig.conf", extconfig.join("\n")],
    ["res_pgsql.conf", pgsql.join("\n")],
  ]);
}
