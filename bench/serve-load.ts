// What bench:api and bench:pg share: `pbxctl serve` processes started on a free port and waited
// for, an org of 50 users seeded through the API, and autocannon's GET /users load over one or
// several servers.
import { type ChildProcess, spawn } from "node:child_process";
import { createServer } from "node:net";
import { join } from "node:path";
import autocannon from "autocannon";

export const root = new URL("..", import.meta.url).pathname;
export const ADMIN_PASSWORD = "bench-admin-password";

export async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer().listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** Resolves once `url` answers 2xx; throws when `child` exits first. */
export async function waitFor(url: string, child: ChildProcess): Promise<void> {
  for (;;) {
    if (child.exitCode !== null) throw new Error(`server exited with ${child.exitCode}`);
    try {
      if ((await fetch(url)).ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 5));
  }
}

/**
 * `pbxctl serve` (the built CLI of `checkout`, this one by default) on `port` over `dataDir`,
 * with `env` added to this one's.
 */
export function startServe(
  dataDir: string,
  port: number,
  env: Record<string, string> = {},
  checkout = root,
): ChildProcess {
  return spawn(
    process.execPath,
    [join(checkout, "bin/run.js"), "serve", "--port", String(port), "--data-dir", dataDir],
    {
      env: { ...process.env, ...env, PBX_ADMIN_PASSWORD: ADMIN_PASSWORD, LOG_LEVEL: "warn" },
      stdio: "ignore",
    },
  );
}

/** SIGTERM, then the exit. */
export async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = new Promise((r) => child.once("exit", r));
  child.kill("SIGTERM");
  await exited;
}

async function json(url: string, init: RequestInit): Promise<Record<string, unknown>> {
  const res = await fetch(url, {
    ...init,
    headers: { "content-type": "application/json", ...init.headers },
  });
  const body = (await res.json()) as Record<string, unknown>;
  if (!res.ok)
    throw new Error(`${init.method ?? "GET"} ${url}: ${res.status} ${JSON.stringify(body)}`);
  return body;
}

/** An org with 50 users, created through the API of the server at `base`; returns the org key. */
export async function seedUsers(base: string): Promise<string> {
  const { token } = await json(`${base}/api/v1/admin/auth`, {
    method: "POST",
    body: JSON.stringify({ admin_username: "admin", admin_password: ADMIN_PASSWORD }),
  });
  const org = await json(`${base}/api/v1/organizations`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}` },
    body: JSON.stringify({ name: "Bench" }),
  });
  const apiKey = String(org.api_key);
  for (let i = 0; i < 50; i++) {
    await json(`${base}/api/v1/users`, {
      method: "POST",
      headers: { "x-api-key": apiKey },
      body: JSON.stringify({ extension: String(2000 + i), name: `User ${i}` }),
    });
  }
  return apiKey;
}

/**
 * 100 connections on `urls` for `seconds`, split evenly (a load balancer's view of replicas):
 * req/s summed, the worst p99, and the requests answered. Any error or non-2xx answer throws.
 */
export async function loadUrls(
  urls: readonly string[],
  headers: Record<string, string>,
  seconds: number,
  /** Instead of `seconds`: stop after this many requests (a warm-up the JIT needs whatever the load). */
  amount?: number,
): Promise<{ rps: number; p99: number; requests: number }> {
  const results = await Promise.all(
    urls.map((url) =>
      autocannon({
        url,
        connections: Math.ceil(100 / urls.length),
        ...(amount === undefined ? { duration: seconds } : { amount }),
        headers,
      }),
    ),
  );
  for (const [i, result] of results.entries()) {
    if (result.non2xx > 0 || result.errors > 0) {
      throw new Error(`${urls[i]}: ${result.non2xx} non-2xx, ${result.errors} errors`);
    }
  }
  return {
    rps: results.reduce((sum, result) => sum + result.requests.average, 0),
    p99: Math.max(...results.map((result) => result.latency.p99)),
    requests: results.reduce((sum, result) => sum + result.requests.total, 0),
  };
}
