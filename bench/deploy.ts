// npm run bench:deploy [-- --orgs 1000 --runs 5]
// With the fake AMI engine (a real TCP AMI server in-process):
// 1. A burst of 100 edits to one org through the real scheduler and real timers (one edit every
//    10 ms): how many reloads, and when the reload reached the engine after the last and the
//    first edit (TARGETS.md: exactly 1 dialplan reload, <= 1.0 s after the last, <= 5 s after the
//    first edit).
// 2. A redeploy of N unchanged orgs (TARGETS.md workload sizes, compiled by the real compiler):
//    files written, reloads, duration (target: 0, 0, < 1 s).
// Figures are medians of several runs.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { compileAll, compileOrg } from "../src/compiler/index.js";
import type { CompiledFile } from "../src/compiler/types.js";
import { FileDeployLog } from "../src/deploy/deploy-log.js";
import { Deployer } from "../src/deploy/deployer.js";
import { OrgDeployScheduler } from "../src/deploy/scheduler.js";
import { deployTree } from "../src/deploy/tree.js";
import { createAmiTarget } from "../src/engine/ami-target.js";
import { FakeAmiServer } from "../src/engine/testing/fake-ami.js";
import { syntheticOrg } from "./synthetic-org.js";

const arg = (name: string, fallback: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : fallback;
};
const ORGS = arg("orgs", 1000);
const RUNS = arg("runs", 5);
const EDITS = 100;
const RELOAD_COMMAND = /^(dialplan reload|module reload \S+|queue reload\b.*)$/;
const EDIT_EVERY_MS = 10;

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const round = (x: number) => Math.round(x * 10) / 10;

async function engine() {
  const dir = await mkdtemp(join(tmpdir(), "pbxctl-bench-deploy-"));
  // The bench deploys org units only; the engine counts them as included, as the top-level
  // files would (otherwise the deployer's check after the reload rightly fails and retries).
  const ami = new FakeAmiServer({ engineDir: dir, implicitIncludes: true });
  const port = await ami.listen();
  const target = createAmiTarget({ host: "127.0.0.1", port, username: "pbxctl", secret: "secret" });
  await target.connection.ready();
  const deployer = new Deployer({ engineDir: dir, target, log: new FileDeployLog(dir) });
  return {
    dir,
    ami,
    deployer,
    close: async () => {
      await target.close();
      await ami.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

async function burstRun(): Promise<{
  reloads: number;
  dialplan: number;
  afterLast: number;
  afterFirst: number;
}> {
  const e = await engine();
  try {
    const base = compileOrg(syntheticOrg(0)).files;
    let edit = 0;
    // Each edit changes the org's dialplan (a comment line), as a saved IVR would.
    const build = async () => ({
      contextPrefix: syntheticOrg(0).org.context_prefix,
      files: base.map((file: CompiledFile) =>
        file.path.endsWith("extensions.conf")
          ? { ...file, content: `${file.content}; edit ${edit}\n` }
          : file,
      ),
    });
    await e.deployer.deploy(
      { kind: "org", prefix: (await build()).contextPrefix },
      (await build()).files,
    );
    const before = e.ami.received.length;
    const scheduler = new OrgDeployScheduler({ deployer: e.deployer, buildOrg: build });
    const first = performance.now();
    let last = first;
    for (let i = 0; i < EDITS; i++) {
      edit++;
      last = performance.now();
      scheduler.scheduleDeploy("org-0");
      await new Promise((r) => setTimeout(r, EDIT_EVERY_MS));
    }
    // Wait for the debounce to fire and the deploy to finish.
    while (scheduler.pendingOrgs.length > 0) await new Promise((r) => setTimeout(r, 20));
    await scheduler.idle();
    await scheduler.stop();
    // Reloads only: the deployer's checks after a reload (`dialplan show ...`) are not reloads.
    const reloads = e.ami.received
      .slice(before)
      .filter((a) => a.action === "Command" && RELOAD_COMMAND.test(String(a.fields.Command)));
    const at = reloads[0]?.at ?? Number.NaN;
    return {
      reloads: reloads.length,
      dialplan: reloads.filter((a) => a.fields.Command === "dialplan reload").length,
      afterLast: at - last,
      afterFirst: at - first,
    };
  } finally {
    await e.close();
  }
}

async function unchangedRun(files: CompiledFile[]) {
  const e = await engine();
  try {
    await deployTree(e.deployer, files); // first deploy: not timed
    const before = e.ami.reloadCommands().length;
    const start = performance.now();
    const result = await deployTree(e.deployer, files);
    const ms = performance.now() - start;
    return {
      ms,
      written: result.records.reduce(
        (n, r) => n + r.filesWritten.length + r.filesRemoved.length,
        0,
      ),
      reloads: e.ami.reloadCommands().length - before,
      units: result.records.length,
    };
  } finally {
    await e.close();
  }
}

console.log(`bench:deploy  fake AMI engine, ${RUNS} runs, medians`);

const bursts = [];
for (let i = 0; i < RUNS; i++) bursts.push(await burstRun());
console.log(
  `burst of ${EDITS} edits (one every ${EDIT_EVERY_MS} ms) to one org: ` +
    `reloads ${median(bursts.map((b) => b.reloads))} (dialplan ${median(bursts.map((b) => b.dialplan))}), ` +
    `reload ${round(median(bursts.map((b) => b.afterLast)))} ms after the last edit, ` +
    `${round(median(bursts.map((b) => b.afterFirst)))} ms after the first ` +
    `[target: exactly 1 dialplan reload, <= 1000 ms after the last, <= 5000 ms after the first]`,
);
console.log(
  `  per run: ${bursts.map((b) => `${b.dialplan}x dialplan @ +${round(b.afterLast)} ms`).join(", ")}`,
);

const orgs = Array.from({ length: ORGS }, (_, i) => syntheticOrg(i));
const tree = compileAll(orgs, { environment: "prod", staging_endpoint: "staging-tunnel" });
const bytes = tree.files.reduce((n, f) => n + Buffer.byteLength(f.content), 0);
const unchanged = [];
for (let i = 0; i < RUNS; i++) unchanged.push(await unchangedRun(tree.files));
console.log(
  `redeploy of ${ORGS} unchanged orgs (${tree.files.length} files, ${(bytes / 1e6).toFixed(1)} MB, ` +
    `${unchanged[0]!.units} units): files written ${median(unchanged.map((u) => u.written))}, ` +
    `reloads ${median(unchanged.map((u) => u.reloads))}, ${round(median(unchanged.map((u) => u.ms)))} ms ` +
    `[target: 0, 0, < 1000 ms]`,
);
console.log(`  per run: ${unchanged.map((u) => `${round(u.ms)} ms`).join(", ")}`);
