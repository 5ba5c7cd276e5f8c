// The floors `GET /users` is measured against (bench:api, profile:api): servers that answer
// every request with the same JSON body as the API's listing and do nothing else, each in its own
// process like `pbxctl serve`.
//  - `koa`: a bare Koa JSON handler (TARGETS.md's floor): Koa's own request and response steps,
//    JSON.stringify of the body, Node's HTTP, the socket write;
//  - `http`: raw `node:http` with the same body, stringified per request, no framework: what
//    any Node server pays on this machine (the p99 question: can any server reach 20 ms here?).
import { type ChildProcess, spawn } from "node:child_process";
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { root } from "./serve-load.js";

export type FloorName = "koa" | "http";

const SCRIPTS: Record<FloorName, string> = {
  koa: `
import Koa from "koa";
const body = JSON.parse(process.env.BODY);
const app = new Koa();
app.use((ctx) => { ctx.body = body; });
app.listen(Number(process.env.PORT), "127.0.0.1");
process.once("SIGTERM", () => process.exit(0));
`,
  http: `
import { createServer } from "node:http";
const body = JSON.parse(process.env.BODY);
createServer((req, res) => {
  const text = JSON.stringify(body);
  res.writeHead(200, {
    "content-type": "application/json; charset=utf-8",
    "content-length": Buffer.byteLength(text),
  });
  res.end(text);
}).listen(Number(process.env.PORT), "127.0.0.1");
process.once("SIGTERM", () => process.exit(0));
`,
};

/**
 * Starts floor `name` serving `body` on `port`, with `nodeArgs` before the script (a profiler's
 * flags); the script lives under bench/ (so `koa` resolves) until `remove` is called.
 */
export function startFloor(
  name: FloorName,
  body: string,
  port: number,
  nodeArgs: readonly string[] = [],
): { child: ChildProcess; remove: () => void } {
  const script = join(root, `bench/.floor-${name}-${process.pid}.mjs`);
  writeFileSync(script, SCRIPTS[name]);
  const child = spawn(process.execPath, [...nodeArgs, script], {
    env: { ...process.env, BODY: body, PORT: String(port) },
    stdio: "ignore",
  });
  return { child, remove: () => rmSync(script, { force: true }) };
}
