// The one outgoing JSON POST (src/http-post.ts) against a loopback server: JSON unless the caller
// names its own content type (never both), the status answered, and a redirect answered as its
// 3xx with `manual` (the user-typed targets) or followed with `follow` (the intake).
import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { createHttpPost } from "../../src/http-post.js";

async function withServer(
  body: (
    base: string,
    seen: Array<{ url: string; headers: IncomingMessage["headers"]; body: string }>,
  ) => Promise<void>,
): Promise<void> {
  const seen: Array<{ url: string; headers: IncomingMessage["headers"]; body: string }> = [];
  const server = createServer((req, res) => {
    let text = "";
    req.on("data", (chunk) => {
      text += chunk;
    });
    req.on("end", () => {
      seen.push({ url: req.url ?? "", headers: req.headers, body: text });
      if (req.url === "/moved") {
        res.writeHead(307, { location: "/target" }).end();
      } else res.writeHead(req.url === "/target" ? 201 : 202).end("ok");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  try {
    await body(`http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen);
  } finally {
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}

test("posts JSON unless the caller names a content type, and answers the status", () =>
  withServer(async (base, seen) => {
    const post = createHttpPost({ timeoutMs: 5000, redirect: "manual" });
    assert.is(await post(`${base}/a`, '{"x":1}', { "x-key": "k" }), 202);
    assert.is(seen[0]!.headers["content-type"], "application/json");
    assert.is(seen[0]!.headers["x-key"], "k");
    assert.is(seen[0]!.body, '{"x":1}');
    await post(`${base}/b`, "x=1", { "Content-Type": "application/x-www-form-urlencoded" });
    assert.is(seen[1]!.headers["content-type"], "application/x-www-form-urlencoded");
  }));

test("a redirect is answered as its status with `manual`, followed with `follow`", () =>
  withServer(async (base, seen) => {
    const manual = createHttpPost({ timeoutMs: 5000, redirect: "manual" });
    assert.is(await manual(`${base}/moved`, "{}", {}), 307);
    assert.equal(
      seen.map((s) => s.url),
      ["/moved"],
      "the redirect's target was never asked",
    );
    const follow = createHttpPost({ timeoutMs: 5000, redirect: "follow" });
    assert.is(await follow(`${base}/moved`, "{}", {}), 201);
    assert.equal(
      seen.map((s) => s.url),
      ["/moved", "/moved", "/target"],
    );
  }));

test.run();
