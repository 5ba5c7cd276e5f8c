// A throwaway PostgreSQL 15 for the engine suite: the store suite's cluster
// (src/store/testing/postgres-cluster.ts: temp dir, free loopback port, the `postgres` user under
// root, stopped by PID) with every statement logged, driven with Debian's psql.
import { execFile } from "node:child_process";
import { join } from "node:path";
import { POSTGRES_BIN, startPostgresCluster } from "../../src/store/testing/postgres-cluster.js";

export interface Postgres {
  readonly port: number;
  /**
   * `postgres://postgres:pbxctl@127.0.0.1:<port>/postgres` (trust: any password, loopback only;
   * res_config_pgsql warns when the URL has none).
   */
  readonly url: string;
  /** The server's log so far: every statement it ran (`log_statement = all`). */
  log(): string;
  /** Runs SQL through psql (stops at the first error) and resolves with its output. */
  sql(text: string): Promise<string>;
  /** Stops the server and starts it again on the same data and port. */
  restart(): Promise<void>;
  stop(): Promise<void>;
}

/** Starts a cluster; throws naming the package when PostgreSQL 15 is not installed. */
export async function startPostgres(): Promise<Postgres> {
  const cluster = await startPostgresCluster({ settings: { log_statement: "all" } });
  const { port } = cluster;
  const sql = (text: string) =>
    new Promise<string>((resolve, reject) => {
      const proc = execFile(
        join(POSTGRES_BIN, "psql"),
        ["-h", "127.0.0.1", "-p", String(port), "-U", "postgres", "-v", "ON_ERROR_STOP=1", "-qAt"],
        (error, stdout, stderr) =>
          error ? reject(new Error(`${error.message}\n${stderr}`)) : resolve(stdout),
      );
      proc.stdin?.end(text);
    });
  return {
    port,
    url: `postgres://postgres:pbxctl@127.0.0.1:${port}/postgres`,
    log: cluster.log,
    sql,
    restart: cluster.restart,
    stop: cluster.stop,
  };
}

/** A SQL string literal (standard_conforming_strings is on: only `'` is doubled). */
export function literal(value: string): string {
  return `'${value.replace(/'/g, "''")}'`;
}
