// `pbxctl engine init`: the hand-off to a stock Asterisk 22. It writes the top-level files Asterisk
// reads from its config directory (`--etc`), which include pbxctl's generated tree. The generated
// tree has top-level include files of its own (extensions.conf, pjsip.conf, queues.conf) whose
// `#include "orgs/<prefix>/..."` lines Asterisk resolves against its config directory, not
// against the including file; so the generated tree must not be the config directory itself
// (both would own extensions.conf), and `orgs` and `gateway` in the config directory are
// symlinks to the generated tree's.
import { randomBytes } from "node:crypto";
import { lstat, mkdir, readFile, readlink, symlink, writeFile } from "node:fs/promises";
import { isAbsolute, join, relative, resolve } from "node:path";
import { GATEWAY_FILE, TOP_LEVEL_FILES } from "../compiler/index.js";
import { CDR_VARIABLES } from "../compiler/names.js";
import { CORE_CONFIG_FILES } from "./engine-core-files.js";
import { modulesConf } from "./engine-modules.js";
import {
  DatabaseUrlError,
  type PgConnection,
  parseDatabaseUrl,
  REALTIME_MODULES,
  realtimeEngineFiles,
  realtimePjsipGlobalOptions,
} from "./engine-realtime-files.js";

export interface EngineInitOptions {
  /** Asterisk's config directory (astetcdir), e.g. /etc/asterisk. */
  etcDir: string;
  /** pbxctl's generated tree (PBX_ASTERISK_DIR); default `<etc>/pbxctl`. */
  generatedDir?: string;
  amiUsername?: string;
  /** Generated when absent (24 random bytes, hex). */
  amiSecret?: string;
  amiPort?: number;
  /** Address of the SIP transports; default loopback (nothing outside the host reaches it). */
  sipBind?: string;
  sipPort?: number;
  /**
   * Addresses (or CIDR ranges) of the carrier that sends DID calls: its INVITEs are identified by
   * source address and start in the generated `gateway-inbound` context.
   */
  carriers?: readonly string[];
  /** Overwrite existing files. */
  force?: boolean;
  /** Where PJSIP objects live: `file` (default, pjsip.conf) or `realtime` (PostgreSQL). */
  pjsip?: "file" | "realtime";
  /** `postgres://user:password@host:port/db`; required with `pjsip: "realtime"`. */
  databaseUrl?: string;
  /**
   * The engine node this Asterisk is (issue 25, `pbxctl nodes add`): with realtime PJSIP it reads
   * that node's views, which show only the orgs placed on it. Absent: the one implicit engine.
   */
  node?: string;
  /**
   * Asterisk's `systemname` ([options] in asterisk.conf): the prefix of every unique id it hands
   * out. Each node of an install needs its own (docs/nodes.md). Absent: asterisk.conf untouched.
   */
  systemName?: string;
}

export interface EngineInitResult {
  etcDir: string;
  generatedDir: string;
  files: string[];
  symlinks: string[];
  /** Empty generated include files written so Asterisk boots before the first deploy. */
  placeholders: string[];
  amiUsername: string;
  amiSecret: string;
  amiPort: number;
  /** Where the SIP transports listen (`address:port`). */
  sipListen: string;
  /** Whether SIP is bound to a loopback address (unreachable from other hosts). */
  sipLoopbackOnly: boolean;
  /** Where each directory the env names came from (asterisk.conf, or Asterisk's defaults). */
  directoriesFrom: string;
  /** The systemname written into asterisk.conf, when `--system-name` was given. */
  systemName?: string;
  /** Environment for `pbxctl serve` / `pbxctl deploy` to reach this engine. */
  env: Record<string, string>;
}

/** Bad engine-init input (same directory twice, unsafe secret, a file in the way). */
export class EngineInitError extends Error {
  override readonly name = "EngineInitError";
}

/** Files holding a secret (the AMI secret, the database password): not world-readable. */
const SECRET_FILES = new Set(["manager.conf", "res_pgsql.conf"]);
const SECRET = /^[A-Za-z0-9._~+=-]{8,128}$/;
const USERNAME = /^[A-Za-z0-9_-]{1,64}$/;
const ADDRESS = /^[0-9A-Fa-f:.]{2,45}$/;
const CARRIER = /^[0-9A-Fa-f:.]{2,45}(\/\d{1,3})?$/;
const NODE_NAME = /^[a-z0-9][a-z0-9-]{0,62}$/;
// A unique id is `<systemname>-<epoch>.<n>` and must fit Asterisk's AST_MAX_UNIQUEID (150);
// 40 leaves room, and the characters need no escaping anywhere an id goes.
const SYSTEM_NAME = /^[A-Za-z0-9_-]{1,40}$/;

/** The default SIP address: loopback, so a fresh engine is reachable from this host only. */
export const DEFAULT_SIP_BIND = "127.0.0.1";
/** The PJSIP endpoint carrier traffic arrives on (`--carrier`); its context is the gateway's. */
export const CARRIER_ENDPOINT = "pbxctl-carrier";
/** The generated gateway's context, where a carrier's DID calls start. */
export const GATEWAY_INBOUND_CONTEXT = "gateway-inbound";

/** Asterisk's compiled-in directories, used when asterisk.conf does not name them. */
const ASTERISK_DEFAULT_DIRS = {
  astdatadir: "/var/lib/asterisk",
  astspooldir: "/var/spool/asterisk",
};

/** The files engine init writes, as path (relative to --etc) -> content. Pure. */
export function engineInitFiles(options: {
  includeDir: string;
  amiUsername: string;
  amiSecret: string;
  amiPort: number;
  sipBind: string;
  sipPort: number;
  carriers?: readonly string[];
  /** Realtime PJSIP from this database; absent: file mode. */
  realtime?: PgConnection;
  /** The engine node whose views realtime PJSIP reads; absent: the tables (one engine). */
  node?: string;
}): Map<string, string> {
  const sipBind = `${options.sipBind.includes(":") ? `[${options.sipBind}]` : options.sipBind}:${options.sipPort}`;
  const header = "; Written by `pbxctl engine init`. pbxctl writes its generated files under";
  const include = (name: string) => `#include "${options.includeDir}/${name}"`;
  const files = new Map<string, string>();
  files.set(
    "extensions.conf",
    [
      header,
      `; ${options.includeDir}; edit the YAML and run pbxctl deploy, not those files.`,
      "[general]",
      "static = yes",
      "writeprotect = yes",
      "clearglobalvars = no",
      "",
      "[globals]",
      "",
      include("extensions.conf"),
      "",
    ].join("\n"),
  );
  files.set(
    "pjsip.conf",
    [
      header,
      `; ${options.includeDir}.`,
      // UDP for phones and most carriers; TCP for trunks whose URI says `transport=tcp`. Both on
      // one port: a transport is chosen by protocol, so they do not clash.
      // Phones by username before any trunk's address (Asterisk's default is ip first): a
      // trunk's identify `match` then never claims a phone's REGISTER or call, even from the
      // carrier's own address. Only the identifiers of the modules pbxctl loads.
      "[global]",
      "type = global",
      "endpoint_identifier_order = username,ip",
      // Asterisk's default ("global") makes PJSIP ignore every new UDP request while ANY
      // taskprocessor is over its high-water mark. app_queue's device-state subscription is
      // one: loading or reloading all queues (a start-up deploy at 1,000 orgs) queues ~60,000
      // events that each scan every member of every queue, and phones then got no answer for
      // minutes. PJSIP's own queues still shed load (docs/engine.md "Device state at scale").
      "taskprocessor_overload_trigger = pjsip_only",
      ...(options.realtime ? realtimePjsipGlobalOptions() : []),
      "",
      "[transport-udp]",
      "type = transport",
      "protocol = udp",
      `bind = ${sipBind}`,
      "",
      "[transport-tcp]",
      "type = transport",
      "protocol = tcp",
      `bind = ${sipBind}`,
      "",
      ...carrierSections(options.carriers ?? []),
      include("pjsip.conf"),
      "",
    ].join("\n"),
  );
  files.set(
    "queues.conf",
    [
      header,
      `; ${options.includeDir}.`,
      "[general]",
      "persistentmembers = yes",
      "",
      include("queues.conf"),
      "",
    ].join("\n"),
  );
  files.set(
    "voicemail.conf",
    [
      header,
      `; ${options.includeDir}.`,
      "[general]",
      "format = wav",
      "",
      include("voicemail.conf"),
      "",
    ].join("\n"),
  );
  files.set(
    "musiconhold.conf",
    [
      header,
      `; ${options.includeDir}.`,
      // The class queues and holds use while an org has no music of its own (stock hold music,
      // <astdatadir>/moh); each org's own class comes from the generated file.
      "[default]",
      "mode = files",
      "directory = moh",
      "",
      include("musiconhold.conf"),
      "",
    ].join("\n"),
  );
  // A top-level file the compiler adds later is included as it is, with no settings of its own.
  for (const name of TOP_LEVEL_FILES) {
    if (!files.has(name))
      files.set(name, [header, `; ${options.includeDir}.`, include(name), ""].join("\n"));
  }
  files.set(
    "manager.conf",
    [
      "; Written by `pbxctl engine init`: AMI for pbxctl, on the loopback interface only.",
      "[general]",
      "enabled = yes",
      `port = ${options.amiPort}`,
      "bindaddr = 127.0.0.1",
      "displayconnects = no",
      "; Every event carries the engine's own time: call journeys are ordered by it, and a",
      "; replayed event is recognised by it.",
      "timestampevents = yes",
      "",
      `[${options.amiUsername}]`,
      `secret = ${options.amiSecret}`,
      "deny = 0.0.0.0/0.0.0.0",
      "permit = 127.0.0.1/255.255.255.255",
      "read = system,call,agent,user,config,dtmf,reporting,cdr,dialplan",
      "write = system,call,agent,user,config,command,reporting,originate",
      "writetimeout = 5000",
      "",
    ].join("\n"),
  );
  files.set(
    "cdr_manager.conf",
    [
      "; Written by `pbxctl engine init`: call records as AMI `Cdr` events. The mappings add the",
      "; fields call history needs: one record per call (LinkedID), the callee's org",
      "; (PeerAccount, tenant isolation rule 3), the order of a channel's records (Sequence),",
      "; and the variables the generated dialplan sets: the call's direction, the recording.",
      "[general]",
      "enabled = yes",
      "",
      "[mappings]",
      "linkedid => LinkedID",
      "peeraccount => PeerAccount",
      "sequence => Sequence",
      `${CDR_VARIABLES.direction} => Direction`,
      `${CDR_VARIABLES.recording} => RecordingFile`,
      "",
    ].join("\n"),
  );
  files.set(
    "modules.conf",
    modulesConf(
      options.realtime
        ? {
            why: "realtime PJSIP: PostgreSQL, the realtime wizard and its memory cache",
            modules: REALTIME_MODULES,
          }
        : undefined,
    ),
  );
  for (const [name, content] of CORE_CONFIG_FILES) files.set(name, content);
  if (options.realtime) {
    for (const [name, content] of realtimeEngineFiles(options.realtime, options.node)) {
      files.set(name, content);
    }
  }
  return files;
}

/**
 * The carrier's endpoint: calls from its addresses (identify by source address) start in the
 * gateway context, which sends each DID to its org. No AOR: pbxctl never dials the carrier
 * through it (outbound calls use each org's own trunks).
 */
function carrierSections(carriers: readonly string[]): string[] {
  if (carriers.length === 0) return [];
  return [
    "; The carrier's DID calls, identified by source address, start in the generated gateway.",
    `[${CARRIER_ENDPOINT}]`,
    "type = endpoint",
    `context = ${GATEWAY_INBOUND_CONTEXT}`,
    "disallow = all",
    "allow = ulaw,alaw",
    "direct_media = no",
    "rtp_symmetric = yes",
    "force_rport = yes",
    "",
    `[${CARRIER_ENDPOINT}]`,
    "type = identify",
    `endpoint = ${CARRIER_ENDPOINT}`,
    `match = ${carriers.join(",")}`,
    "",
  ];
}

/** Whether `address` is a loopback address (IPv4 127/8 or ::1). */
export function isLoopbackAddress(address: string): boolean {
  return /^127\./.test(address) || address === "::1";
}

/**
 * astdatadir and astspooldir as `<etc>/asterisk.conf` sets them, else Asterisk's defaults:
 * greetings and music on hold are played from `<astdatadir>/sounds`, recordings are written
 * under `<astspooldir>/monitor`.
 */
export async function asteriskDirectories(
  etcDir: string,
): Promise<{ astdatadir: string; astspooldir: string; from: string }> {
  const file = join(etcDir, "asterisk.conf");
  const text = await readFile(file, "utf8").catch(() => null);
  const found: Record<string, string> = {};
  for (const line of (text ?? "").split("\n")) {
    const match = /^\s*(astdatadir|astspooldir)\s*=>?\s*(\S.*?)\s*$/.exec(line);
    if (match) found[match[1]!] = match[2]!;
  }
  return {
    astdatadir: found.astdatadir ?? ASTERISK_DEFAULT_DIRS.astdatadir,
    astspooldir: found.astspooldir ?? ASTERISK_DEFAULT_DIRS.astspooldir,
    from: text === null ? "Asterisk's defaults (no asterisk.conf in --etc)" : file,
  };
}

/** Writes the top-level Asterisk files and the symlinks into the generated tree. */
export async function initEngine(options: EngineInitOptions): Promise<EngineInitResult> {
  const etcDir = resolve(options.etcDir);
  const generatedDir = resolve(options.generatedDir ?? join(etcDir, "pbxctl"));
  if (generatedDir === etcDir) {
    throw new EngineInitError(
      "--generated must differ from --etc: both would own extensions.conf, pjsip.conf and queues.conf",
    );
  }
  const amiUsername = options.amiUsername ?? "pbxctl";
  if (!USERNAME.test(amiUsername)) {
    throw new EngineInitError("--ami-user may hold letters, digits, _ and - (1-64)");
  }
  const amiSecret = options.amiSecret ?? randomBytes(24).toString("hex");
  if (!SECRET.test(amiSecret)) {
    throw new EngineInitError("--ami-secret must be 8-128 characters of A-Z a-z 0-9 . _ ~ + = -");
  }
  const sipBind = options.sipBind ?? DEFAULT_SIP_BIND;
  if (!ADDRESS.test(sipBind)) throw new EngineInitError(`--sip-bind is not an address: ${sipBind}`);
  const carriers = options.carriers ?? [];
  for (const carrier of carriers) {
    if (!CARRIER.test(carrier)) {
      throw new EngineInitError(
        `--carrier is not an IP address or CIDR range: ${carrier} (Asterisk resolves host names once, at load)`,
      );
    }
  }
  const amiPort = options.amiPort ?? 5038;
  const sipPort = options.sipPort ?? 5060;

  const inside = relative(etcDir, generatedDir);
  // Relative includes resolve against Asterisk's config dir, which is --etc.
  const includeDir = !inside.startsWith("..") && !isAbsolute(inside) ? inside : generatedDir;
  if (/["\r\n;]/.test(includeDir)) {
    throw new EngineInitError(`the generated directory path cannot be included: ${includeDir}`);
  }
  let realtime: PgConnection | undefined;
  if (options.pjsip === "realtime") {
    if (!options.databaseUrl) throw new EngineInitError("--pjsip realtime needs --database-url");
    try {
      realtime = parseDatabaseUrl(options.databaseUrl);
    } catch (error) {
      if (error instanceof DatabaseUrlError) throw new EngineInitError(error.message);
      throw error;
    }
  } else if (options.databaseUrl) {
    throw new EngineInitError("--database-url is only used with --pjsip realtime");
  }
  if (options.node !== undefined && !NODE_NAME.test(options.node)) {
    throw new EngineInitError(
      "--node must be an engine node's name (lowercase letters, digits and -, at most 63)",
    );
  }
  if (options.node !== undefined && !realtime) {
    // File mode needs nothing per node here: the node's generated tree holds its orgs only.
    throw new EngineInitError("--node is only used with --pjsip realtime");
  }
  if (options.systemName !== undefined && !SYSTEM_NAME.test(options.systemName)) {
    throw new EngineInitError(
      "--system-name may hold letters, digits, _ and - (1-40): it prefixes every unique id",
    );
  }
  const files = engineInitFiles({
    includeDir,
    amiUsername,
    amiSecret,
    amiPort,
    sipBind,
    sipPort,
    carriers,
    ...(realtime ? { realtime } : {}),
    ...(options.node !== undefined ? { node: options.node } : {}),
  });
  const directories = await asteriskDirectories(etcDir);

  await mkdir(etcDir, { recursive: true });
  for (const sub of ["orgs", "gateway"]) await mkdir(join(generatedDir, sub), { recursive: true });
  if (!options.force) {
    const existing: string[] = [];
    for (const name of files.keys()) {
      if (await exists(join(etcDir, name))) existing.push(name);
    }
    if (existing.length > 0) {
      throw new EngineInitError(
        `${existing.join(", ")} already exist in ${etcDir}; pass --force to overwrite`,
      );
    }
  }
  const symlinks: string[] = [];
  for (const sub of ["orgs", "gateway"]) {
    const link = join(etcDir, sub);
    const target = relative(etcDir, join(generatedDir, sub));
    const current = await lstat(link).catch(() => null);
    if (current?.isSymbolicLink() && (await readlink(link)) === target) continue;
    if (current) {
      throw new EngineInitError(`${link} exists and is not a symlink to ${target}; move it away`);
    }
    await symlink(target, link, "dir");
    symlinks.push(`${sub} -> ${target}`);
  }
  for (const [name, content] of files) {
    await writeFile(join(etcDir, name), content, { mode: SECRET_FILES.has(name) ? 0o640 : 0o644 });
  }
  if (options.systemName !== undefined) await writeSystemName(etcDir, options.systemName);
  const placeholders = await writeGeneratedPlaceholders(generatedDir);
  return {
    etcDir,
    generatedDir,
    files: [...files.keys()],
    symlinks,
    placeholders,
    amiUsername,
    amiSecret,
    amiPort,
    sipListen: `${sipBind.includes(":") ? `[${sipBind}]` : sipBind}:${sipPort}`,
    sipLoopbackOnly: isLoopbackAddress(sipBind),
    directoriesFrom: directories.from,
    ...(options.systemName !== undefined ? { systemName: options.systemName } : {}),
    env: {
      PBX_ENGINE: "ami",
      PBX_ASTERISK_DIR: generatedDir,
      PBX_AMI_HOST: "127.0.0.1",
      PBX_AMI_PORT: String(amiPort),
      PBX_AMI_USERNAME: amiUsername,
      PBX_AMI_SECRET: amiSecret,
      // Greetings and music on hold are played from <astdatadir>/sounds; MixMonitor writes the
      // recordings the API serves under <astspooldir>/monitor.
      PBX_SOUNDS_DIR: join(directories.astdatadir, "sounds"),
      PBX_RECORDINGS_DIR: join(directories.astspooldir, "monitor"),
    },
  };
}

/**
 * Sets `systemname` in `<etc>/asterisk.conf`'s `[options]`, keeping everything else of the file
 * (its directories above all): the line is replaced where it is, or added at the top of
 * `[options]`, or an `[options]` section is added. With no asterisk.conf, one holding only that
 * section is written: Asterisk keeps its compiled-in directories for what a file does not name.
 * engine init never writes asterisk.conf otherwise, so the default single engine is unchanged.
 */
export async function writeSystemName(etcDir: string, systemName: string): Promise<void> {
  const file = join(etcDir, "asterisk.conf");
  const text = await readFile(file, "utf8").catch((error: NodeJS.ErrnoException) => {
    if (error.code === "ENOENT") return null;
    throw error;
  });
  await writeFile(file, withSystemName(text, systemName));
}

/** asterisk.conf `text` (null: none) with `systemname = <name>` in `[options]`. Pure. */
export function withSystemName(text: string | null, systemName: string): string {
  const setting = `systemname = ${systemName}`;
  if (text === null) {
    return `; Written by \`pbxctl engine init --system-name\`.\n[options]\n${setting}\n`;
  }
  const lines = text.split("\n");
  let section = "";
  let optionsAt = -1;
  for (const [index, line] of lines.entries()) {
    const header = /^\s*\[([^\]]*)\]/.exec(line);
    if (header) {
      section = header[1]!.trim().toLowerCase();
      if (section === "options" && optionsAt < 0) optionsAt = index;
      continue;
    }
    if (section === "options" && /^\s*systemname\s*=/i.test(line)) {
      lines[index] = setting;
      return lines.join("\n");
    }
  }
  if (optionsAt >= 0) {
    lines.splice(optionsAt + 1, 0, setting);
    return lines.join("\n");
  }
  return `${text}${text.endsWith("\n") || text === "" ? "" : "\n"}[options]\n${setting}\n`;
}

/**
 * The top-level files include the generated tree's include files; Asterisk refuses a whole
 * config file (and with it pbx_config, app_queue, every transport) when an `#include` names a
 * missing file. So until the first deploy writes them, empty ones stand in. Existing files are
 * never touched: they are a deploy's.
 */
async function writeGeneratedPlaceholders(generatedDir: string): Promise<string[]> {
  const written: string[] = [];
  for (const name of [...TOP_LEVEL_FILES, GATEWAY_FILE]) {
    const file = join(generatedDir, name);
    if (await exists(file)) continue;
    const header = "; pbxctl: nothing deployed yet. The first deploy replaces this file.\n";
    await writeFile(file, header, { flag: "wx" }).catch((error: NodeJS.ErrnoException) => {
      if (error.code !== "EEXIST") throw error;
    });
    written.push(name);
  }
  return written;
}

async function exists(path: string): Promise<boolean> {
  return (await lstat(path).catch(() => null)) !== null;
}
