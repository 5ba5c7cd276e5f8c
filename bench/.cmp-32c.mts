import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { ADMIN_PASSWORD, freePort, loadUrls, seedUsers, stop, waitFor, root } from "./serve-load.js";
const roots = process.argv.slice(3); const RUNS = Number(process.argv[2]); const DUR = 10;
const cpu = (pid: number) => { const s = readFileSync(`/proc/${pid}/stat`, "utf8"); const f = s.slice(s.lastIndexOf(")") + 2).split(" "); return (Number(f[11]) + Number(f[12])) / 100; };
const servers: { name: string; url: string; headers: Record<string, string>; pid: number; child: any }[] = [];
let body = "";
for (const r of roots) {
  const dir = mkdtempSync(join(tmpdir(), "32c-cmp-")); const port = await freePort();
  const child = spawn(process.execPath, [join(r, "bin/run.js"), "serve", "--port", String(port), "--data-dir", dir], { env: { ...process.env, PBX_ADMIN_PASSWORD: ADMIN_PASSWORD, LOG_LEVEL: "warn" }, stdio: "ignore" });
  const base = `http://127.0.0.1:${port}`; await waitFor(`${base}/health`, child);
  const key = await seedUsers(base);
  body = await (await fetch(`${base}/api/v1/users`, { headers: { "x-api-key": key } })).text();
  servers.push({ name: r, url: `${base}/api/v1/users`, headers: { "x-api-key": key }, pid: child.pid!, child });
}
const script = join(root, "bench/.bare-koa-32c.mjs");
writeFileSync(script, `import Koa from "koa"; const body = JSON.parse(process.env.BODY); const app = new Koa(); app.use((ctx) => { ctx.body = body; }); app.listen(Number(process.env.PORT), "127.0.0.1");`);
const bp = await freePort();
const bare = spawn(process.execPath, [script], { env: { ...process.env, BODY: body, PORT: String(bp) }, stdio: "ignore" });
await waitFor(`http://127.0.0.1:${bp}/`, bare);
servers.push({ name: "bare-koa", url: `http://127.0.0.1:${bp}/`, headers: {}, pid: bare.pid!, child: bare });
for (const s of servers) await loadUrls([s.url], s.headers, 3);
const res: Record<string, { rps: number[]; p99: number[]; cpu: number[] }> = {};
for (let i = 0; i < RUNS; i++) for (const s of servers) {
  const c0 = cpu(s.pid); const r = await loadUrls([s.url], s.headers, DUR); const us = ((cpu(s.pid) - c0) / r.requests) * 1e6;
  (res[s.name] ??= { rps: [], p99: [], cpu: [] }); res[s.name].rps.push(Math.round(r.rps)); res[s.name].p99.push(r.p99); res[s.name].cpu.push(Math.round(us));
  console.log(i + 1, s.name, Math.round(r.rps), "req/s p99", r.p99, "cpu/req", Math.round(us), "us load", loadavg()[0].toFixed(1));
}
const med = (x: number[]) => [...x].sort((a, b) => a - b)[Math.floor(x.length / 2)];
for (const [n, v] of Object.entries(res)) console.log("MEDIAN", n, med(v.rps), "req/s p99", med(v.p99), "cpu/req", med(v.cpu));
for (const s of servers) await stop(s.child);
