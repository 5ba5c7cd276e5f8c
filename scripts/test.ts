// Runs every uvu suite under test/ (optionally filtered by a path substring) in one process and
// closes with a plain "N passed, N failed" line, which CI reads to know that tests really ran.
// `--engine` runs test/engine/ instead: those suites boot a real Asterisk 22 (PBX_ASTERISK_PREFIX)
// and are never part of the fast suite. `--pg` runs the fast suite again with every store on a
// throwaway PostgreSQL 15 cluster (test/store/test-database.ts), stopped by PID when the run ends,
// plus test/replicas/ (several built `pbxctl serve` processes: `npm run build` first).
import { spawn } from "node:child_process";
import { readdirSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { asteriskInstallOrExit } from "../src/engine/testing/asterisk-install.js";
import { migrateToLatest, openStoreHandle } from "../src/store/database.js";
import {
  type PostgresCluster,
  startPostgresCluster,
} from "../src/store/testing/postgres-cluster.js";
import { TEMPLATE_DATABASE, TEST_POSTGRES_VARIABLE } from "../test/store/test-database.js";

const root = new URL("..", import.meta.url).pathname;
const engine = process.argv.includes("--engine");
const postgres = process.argv.includes("--pg");
const cluster = process.argv.includes("--cluster");
const filters = process.argv
  .slice(2)
  .filter((arg) => arg !== "--engine" && arg !== "--pg" && arg !== "--cluster");
const engineDir = join("test", "engine");
// `--cluster` runs test/cluster/ instead: a real Kamailio edge with stand-in nodes (SIPp) on
// loopback addresses, never part of the fast suite.
const clusterDir = join("test", "cluster");
// The replica suite starts three `pbxctl serve` processes (the built CLI) and kills some: about a
// minute, so it runs with `--pg` (on PostgreSQL, the store replicas are meant for) and when named
// (`npm run test:unit -- test/replicas` on SQLite), not in the fast SQLite suite.
const replicasDir = join("test", "replicas");

// Never a silent skip: without an engine the engine suite cannot say anything.
if (engine) asteriskInstallOrExit();

function findTests(dir: string): string[] {
  const found: string[] = [];
  for (const entry of readdirSync(dir).sort()) {
    const full = join(dir, entry);
    if (statSync(full).isDirectory()) found.push(...findTests(full));
    else if (entry.endsWith(".test.ts")) found.push(full);
  }
  return found;
}

const files = findTests(join(root, "test"))
  .map((file) => relative(root, file))
  .filter((file) => file.startsWith(engineDir) === engine)
  .filter((file) => file.startsWith(clusterDir) === cluster)
  .filter((file) => filters.length === 0 || filters.some((f) => file.includes(f)))
  .filter((file) => postgres || filters.length > 0 || !file.startsWith(replicasDir));

if (files.length === 0) {
  console.error(`no test files match ${filters.join(" ")}`);
  process.exit(1);
}

// uvu's own runner takes a directory and a pattern; an alternation of exact file paths keeps
// the filter semantics simple.
const escaped = files.map((file) => file.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"));
const pattern = `^(${escaped.join("|")})$`;
/** A cluster with the migrated template database every test's database is copied from. */
async function startTestCluster(): Promise<PostgresCluster> {
  const cluster = await startPostgresCluster();
  try {
    await cluster.admin(`CREATE DATABASE ${TEMPLATE_DATABASE}`);
    const db = openStoreHandle({
      kind: "postgres",
      url: cluster.url(TEMPLATE_DATABASE),
      poolSize: 1,
    });
    try {
      await migrateToLatest(db);
    } finally {
      await db.destroy();
    }
    return cluster;
  } catch (error) {
    await cluster.stop();
    throw error;
  }
}

const pgCluster = postgres ? await startTestCluster() : null;
if (pgCluster) {
  console.log(`PostgreSQL test cluster on port ${pgCluster.port} (pid ${pgCluster.pid})`);
}
const child = spawn(
  process.execPath,
  ["--import", "tsx", join(root, "node_modules/uvu/bin.js"), ".", pattern, "--color=false"],
  {
    cwd: root,
    stdio: ["ignore", "pipe", "inherit"],
    env: {
      ...process.env,
      NODE_ENV: "test",
      ...(pgCluster ? { [TEST_POSTGRES_VARIABLE]: pgCluster.url("postgres") } : {}),
    },
  },
);

let tail = "";
child.stdout.on("data", (chunk: Buffer) => {
  process.stdout.write(chunk);
  tail = (tail + chunk.toString()).slice(-4000);
});
child.on("close", async (code) => {
  await pgCluster?.stop();
  const total = Number(/Total:\s+(\d+)/.exec(tail)?.[1] ?? 0);
  const passed = Number(/Passed:\s+(\d+)/.exec(tail)?.[1] ?? 0);
  const skipped = Number(/Skipped:\s+(\d+)/.exec(tail)?.[1] ?? 0);
  const failed = code === 0 ? total - passed - skipped : Math.max(1, total - passed - skipped);
  console.log(`\n${passed} passed, ${failed} failed, ${skipped} skipped`);
  process.exit(code === 0 && total > 0 ? 0 : 1);
});
