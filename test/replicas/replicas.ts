// Several `pbxctl serve` processes (the built CLI, bin/run.js over dist/) on one store: the
// harness of the replica tests. They share one data dir (the store when it is SQLite, the
// secrets, the engine directory the fake engine "loads" and the media), so they are replicas of
// one install; with PBX_DATABASE_URL in the environment (npm run test:pg) the store is that
// PostgreSQL database instead. Each is a real process, so SIGKILL is a real crash.
import { type ChildProcess, spawn } from "node:child_process";
import { join } from "node:path";
import { ROOT } from "../cli/run-command.js";

export interface Replica {
  name: string;
  url: string;
  proc: ChildProcess;
  /** JSON log lines it wrote. */
  logs: string[];
  exited: Promise<NodeJS.Signals | number | null>;
  /** GET /health's body. */
  health(): Promise<{ replica: string; roles: string[]; [key: string]: unknown }>;
  kill(signal?: NodeJS.Signals): Promise<void>;
}

/** Starts `pbxctl serve` on a free port and resolves once it listens. */
export async function startReplica(
  name: string,
  dataDir: string,
  env: Record<string, string>,
): Promise<Replica> {
  const proc = spawn(
    process.execPath,
    [join(ROOT, "bin/run.js"), "serve", "--port", "0", "--data-dir", dataDir],
    {
      cwd: ROOT,
      env: { ...process.env, NODE_ENV: "production", PBX_REPLICA_ID: name, ...env },
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  const logs: string[] = [];
  let stderr = "";
  proc.stderr!.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const exited = new Promise<NodeJS.Signals | number | null>((resolve) =>
    proc.on("exit", (code, signal) => resolve(signal ?? code)),
  );
  const url = await new Promise<string>((resolve, reject) => {
    let buffered = "";
    proc.stdout!.on("data", (chunk: Buffer) => {
      buffered += chunk.toString();
      for (;;) {
        const end = buffered.indexOf("\n");
        if (end < 0) break;
        const line = buffered.slice(0, end);
        buffered = buffered.slice(end + 1);
        logs.push(line);
        try {
          const entry = JSON.parse(line) as { msg?: string; url?: string };
          if (entry.msg === "pbxctl serving" && entry.url) resolve(entry.url);
        } catch {}
      }
    });
    void exited.then((how) => reject(new Error(`replica ${name} exited (${how}): ${stderr}`)));
  });
  return {
    name,
    url,
    proc,
    logs,
    exited,
    async health() {
      const res = await fetch(`${url}/health`);
      return (await res.json()) as { replica: string; roles: string[] };
    },
    async kill(signal = "SIGKILL") {
      if (proc.exitCode === null && proc.signalCode === null) proc.kill(signal);
      await exited;
    },
  };
}

/** Runs `tasks` with at most `concurrency` at once; resolves with their results in order. */
export async function pool<T>(
  concurrency: number,
  tasks: ReadonlyArray<() => Promise<T>>,
): Promise<T[]> {
  const results: T[] = new Array(tasks.length);
  let next = 0;
  const worker = async () => {
    while (next < tasks.length) {
      const index = next++;
      results[index] = await tasks[index]!();
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, tasks.length) }, worker));
  return results;
}

/** Polls `check` until it returns a value (not undefined) or `timeoutMs` passes. */
export async function until<T>(
  what: string,
  timeoutMs: number,
  check: () => Promise<T | undefined>,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check().catch(() => undefined);
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
