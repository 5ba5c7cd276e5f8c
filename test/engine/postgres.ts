// A throwaway PostgreSQL 15 for the engine suite: a fresh cluster in a temp dir, run as the
// `postgres` user (PostgreSQL refuses root) on a free loopback port, driven with Debian's psql,
// and stopped by its PID whatever happens.
import { type ChildProcess, execFile, spawn } from "node:child_process";
import { chownSync, closeSync, existsSync, openSync, readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";
import { freeLoopbackPort } from "../../src/engine/testing/asterisk-instance.js";

const run = promisify(execFile);
const BIN = "/usr/lib/postgresql/15/bin";

export interface Postgres {
  readonly port: number;
  /** `postgres://postgres:pbxctl@127.0.0.1:<port>/postgres` (trust: any password, loopback only). */
  readonly url: string;
  /** The server's log so far: every statement it ran (`log_statement = all`). */
  log(): string;
  /** Runs SQL through psql (stops at the first error) and resolves with its output. */
  sql(text: string): Promise<string>;
  stop(): Promise<void>;
}

/** The uid and gid of the `postgres` account Debian's packages create. */
async function postgresAccount(): Promise<{ uid: number; gid: number }> {
  const uid = Number((await run("id", ["-u", "postgres"])).stdout.trim());
  const gid = Number((await run("id", ["-g", "postgres"])).stdout.trim());
  return { uid, gid };
}

/** Starts a cluster; throws naming the package when PostgreSQL 15 is not installed. */
export async function startPostgres(): Promise<Postgres> {
  if (!existsSync(join(BIN, "postgres"))) {
    throw new Error(`${BIN}/postgres not found: install Debian's postgresql-15`);
  }
  const account = await postgresAccount();
  const dir = await mkdtemp("/tmp/pbxpg-");
  chownSync(dir, account.uid, account.gid);
  const data = join(dir, "data");
  await run(join(BIN, "initdb"), ["-D", data, "-A", "trust", "-U", "postgres", "-E", "UTF8"], {
    ...account,
    cwd: dir,
  });
  const port = await freeLoopbackPort();
  const logFile = join(dir, "server.log");
  const logFd = openSync(logFile, "a");
  chownSync(logFile, account.uid, account.gid);
  const child: ChildProcess = spawn(
    join(BIN, "postgres"),
    [
      ...["-D", data, "-p", String(port), "-k", dir],
      ...["-c", "listen_addresses=127.0.0.1", "-c", "log_statement=all"],
    ],
    { ...account, cwd: dir, stdio: ["ignore", logFd, logFd] },
  );
  closeSync(logFd);
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((resolve) => child.once("exit", resolve));
      child.kill("SIGINT"); // fast shutdown
      const timer = setTimeout(() => child.kill("SIGKILL"), 5000);
      await exited;
      clearTimeout(timer);
    }
    await rm(dir, { recursive: true, force: true });
  };
  process.once("exit", () => child.kill("SIGKILL"));
  const sql = (text: string) =>
    new Promise<string>((resolve, reject) => {
      const proc = execFile(
        join(BIN, "psql"),
        ["-h", "127.0.0.1", "-p", String(port), "-U", "postgres", "-v", "ON_ERROR_STOP=1", "-qAt"],
        (error, stdout, stderr) =>
          error ? reject(new Error(`${error.message}\n${stderr}`)) : resolve(stdout),
      );
      proc.stdin?.end(text);
    });
  try {
    for (let attempt = 0; ; attempt++) {
      try {
        await run(join(BIN, "pg_isready"), ["-h", "127.0.0.1", "-p", String(port), "-q"]);
        break;
      } catch (error) {
        if (attempt >= 100 || child.exitCode !== null) throw error;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    }
  } catch (error) {
    await stop();
    throw new Error(`PostgreSQL did not start on port ${port}: ${String(error)}`);
  }
  const log = () => readFileSync(logFile, "utf8");
  return { port, url: `postgres://postgres:pbxctl@127.0.0.1:${port}/postgres`, log, sql, stop };
}

/** A SQL string literal (standard_conforming_strings is on: only `'` is doubled). */
export function literal(value: string): string {
  return `'${value.replace(/'/g, "''")}'`;
}
