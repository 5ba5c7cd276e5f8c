// `pbxctl serve` as shipped (bin/run.js over dist/, npm test builds first), started as a child
// process on a free port: for the tests that must see the real command (its bundle, its SIGTERM).
import { type ChildProcess, spawn } from "node:child_process";
import { join } from "node:path";
import { ROOT } from "./run-command.js";

export interface ServeProcess {
  child: ChildProcess;
  /** The URL it logged once listening. */
  url: string;
  /** Its exit code (null when killed by a signal). */
  exited: Promise<number | null>;
  /** Everything it wrote so far, stdout and stderr. */
  output(): string;
}

/** Starts `pbxctl serve --port 0 --data-dir <dataDir>` and resolves once it serves. */
export async function startServeProcess(
  dataDir: string,
  env: NodeJS.ProcessEnv,
): Promise<ServeProcess> {
  const child = spawn(
    process.execPath,
    [join(ROOT, "bin/run.js"), "serve", "--port", "0", "--data-dir", dataDir],
    { cwd: ROOT, env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] },
  );
  let output = "";
  child.stderr.on("data", (chunk: Buffer) => {
    output += chunk.toString();
  });
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  try {
    const url = await new Promise<string>((resolve, reject) => {
      let buffered = "";
      child.stdout.on("data", (chunk: Buffer) => {
        buffered += chunk.toString();
        output += chunk.toString();
        for (const line of buffered.split("\n")) {
          if (line.includes('"pbxctl serving"')) resolve((JSON.parse(line) as { url: string }).url);
        }
      });
      void exited.then(() => reject(new Error(`serve exited early:\n${output}`)));
    });
    return { child, url, exited, output: () => output };
  } catch (error) {
    if (child.exitCode === null) child.kill("SIGKILL");
    throw error;
  }
}

/** POSTs JSON to `<url>/api/v1<path>`. */
export function postJson(
  url: string,
  path: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<Response> {
  return fetch(`${url}/api/v1${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify(body),
  });
}

/** An admin token from the server's admin login. */
export async function adminToken(url: string, password: string): Promise<string> {
  const auth = await postJson(url, "/admin/auth", {
    admin_username: "admin",
    admin_password: password,
  });
  return ((await auth.json()) as { token: string }).token;
}
