// One throwaway PostgreSQL 15 cluster for a test run or a bench: `initdb` into its own temp dir,
// the server on a free loopback port with its socket in that dir, durability off (a test cluster
// is thrown away, never recovered), and a stop that always ends the server by its PID. PostgreSQL
// refuses to run as root; under root (CI) the cluster runs as the `postgres` system user the
// Debian package creates, which owns the temp dir.
import { type ChildProcess, execFile, spawn } from "node:child_process";
import { chownSync, existsSync, openSync, readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { createServer } from "node:net";
import { join } from "node:path";
import pg from "pg";
import { killOnExit } from "../../kill-on-exit.js";

/** Where Debian's postgresql-15 puts its binaries. */
export const POSTGRES_BIN = "/usr/lib/postgresql/15/bin";

export interface PostgresCluster {
  /** The server's PID (a new one after `restart`). */
  readonly pid: number;
  readonly port: number;
  /** A connection URL for `database` on this cluster (superuser `postgres`, no password). */
  url(database: string): string;
  /** Runs one statement on the `postgres` database (CREATE/DROP DATABASE and the like). */
  admin(statement: string): Promise<void>;
  /** The server's log so far (with `settings: {log_statement: "all"}`, every statement). */
  log(): string;
  /** Stops the server (fast shutdown) and starts it again on the same data and port. */
  restart(): Promise<void>;
  /** Stops the server (fast shutdown, then SIGKILL by PID) and removes its directory. */
  stop(): Promise<void>;
}

export interface PostgresClusterOptions {
  /** More server settings (`-c name=value`), e.g. `{log_statement: "all"}`. */
  settings?: Record<string, string>;
}

/** The uid/gid to run the server as: ours, unless we are root (then `postgres`'s). */
function serverUser(): { uid: number; gid: number } | null {
  if (process.getuid?.() !== 0) return null;
  const line = readFileSync("/etc/passwd", "utf8")
    .split("\n")
    .find((entry) => entry.startsWith("postgres:"));
  if (!line) {
    throw new Error(
      "running as root needs the `postgres` system user (apt-get install postgresql-15)",
    );
  }
  const [, , uid, gid] = line.split(":");
  return { uid: Number(uid), gid: Number(gid) };
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() => resolve(typeof address === "object" && address ? address.port : 0));
    });
  });
}

function run(binary: string, args: string[], user: { uid: number; gid: number } | null) {
  return new Promise<void>((resolve, reject) => {
    execFile(
      join(POSTGRES_BIN, binary),
      args,
      { ...(user ?? {}), timeout: 60_000, maxBuffer: 16 * 1024 * 1024 },
      (error, stdout, stderr) => {
        if (error) reject(new Error(`${binary} failed: ${error.message}\n${stdout}${stderr}`));
        else resolve();
      },
    );
  });
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

async function waitReady(url: string, child: ChildProcess, logFile: string): Promise<void> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (child.exitCode !== null) {
      throw new Error(`postgres exited (${child.exitCode}):\n${readFileSync(logFile, "utf8")}`);
    }
    const client = new pg.Client({ connectionString: url });
    try {
      await client.connect();
      await client.end();
      return;
    } catch (error) {
      await client.end().catch(() => {});
      if (Date.now() > deadline) throw error;
      await delay(100);
    }
  }
}

/** Creates and starts a cluster; resolves once it accepts connections. */
export async function startPostgresCluster(
  options: PostgresClusterOptions = {},
): Promise<PostgresCluster> {
  if (!existsSync(join(POSTGRES_BIN, "postgres"))) {
    throw new Error(`${POSTGRES_BIN}/postgres not found: apt-get install postgresql-15`);
  }
  const user = serverUser();
  const dir = await mkdtemp("/tmp/pbxpg-");
  if (user) chownSync(dir, user.uid, user.gid);
  const data = join(dir, "data");
  const logFile = join(dir, "server.log");
  try {
    // C locale: text sorts by code point, as SQLite's BINARY collation does.
    await run(
      "initdb",
      ["-D", data, "-U", "postgres", "--auth=trust", "--encoding=UTF8", "--locale=C", "--no-sync"],
      user,
    );
  } catch (error) {
    await rm(dir, { recursive: true, force: true });
    throw error;
  }
  const port = await freePort();
  const log = openSync(logFile, "a");
  if (user) chownSync(logFile, user.uid, user.gid);
  const launch = () => {
    const server = spawn(
      join(POSTGRES_BIN, "postgres"),
      [
        ...["-D", data, "-p", String(port), "-k", dir],
        ...["-c", "listen_addresses=127.0.0.1", "-c", "max_connections=300"],
        ...["-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off"],
        ...Object.entries(options.settings ?? {}).flatMap(([name, value]) => [
          "-c",
          `${name}=${value}`,
        ]),
      ],
      { ...(user ?? {}), stdio: ["ignore", log, log] },
    );
    killOnExit(server);
    return server;
  };
  let child = launch();
  const url = (database: string) => `postgres://postgres@127.0.0.1:${port}/${database}`;
  // Fast shutdown (a clean checkpoint, so a restart needs no recovery), SIGKILL if it hangs.
  const shutdown = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
      child.kill("SIGINT");
      const killed = await Promise.race([exited.then(() => true), delay(10_000).then(() => false)]);
      if (!killed) {
        child.kill("SIGKILL");
        await exited;
      }
    }
  };
  const stop = async () => {
    await shutdown();
    await rm(dir, { recursive: true, force: true });
  };
  try {
    await waitReady(url("postgres"), child, logFile);
  } catch (error) {
    await stop();
    throw error;
  }
  return {
    get pid() {
      return child.pid ?? 0;
    },
    port,
    url,
    async restart() {
      await shutdown();
      child = launch();
      await waitReady(url("postgres"), child, logFile);
    },
    async admin(statement) {
      const client = new pg.Client({ connectionString: url("postgres") });
      await client.connect();
      try {
        await client.query(statement);
      } finally {
        await client.end();
      }
    },
    log: () => readFileSync(logFile, "utf8"),
    stop,
  };
}
