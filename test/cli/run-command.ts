// Runs an oclif command class in-process and captures what it prints and its exit code.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Config, Errors } from "@oclif/core";

export const ROOT = fileURLToPath(new URL("../..", import.meta.url));

export interface CommandOutput<T> {
  code: number;
  stdout: string;
  stderr: string;
  result?: Awaited<T>;
  error?: Error;
}

type Runnable<T> = { run(argv: string[], config: Config): Promise<T> };

let config: Promise<Config> | undefined;

// The project's package.json without its command list: oclif would otherwise import every
// compiled command in dist/ (slow, and noisy while others edit them) just to build a manifest.
function testConfig(): Promise<Config> {
  const pjson = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8"));
  pjson.oclif = { ...pjson.oclif, commands: undefined };
  config ??= Config.load({ root: ROOT, pjson });
  return config;
}

/** Runs `command` with `argv`; exit codes come from oclif's ExitError / CLIError. */
export async function runCommand<T>(
  command: Runnable<T>,
  argv: string[],
): Promise<CommandOutput<T>> {
  const out: string[] = [];
  const err: string[] = [];
  const stdoutWrite = process.stdout.write;
  const stderrWrite = process.stderr.write;
  const capture = (into: string[]) =>
    ((chunk: string | Uint8Array) => {
      into.push(typeof chunk === "string" ? chunk : Buffer.from(chunk).toString());
      return true;
    }) as typeof process.stdout.write;
  process.stdout.write = capture(out);
  process.stderr.write = capture(err);
  const exitCodeBefore = process.exitCode;
  try {
    const result = await command.run(argv, await testConfig());
    return { code: 0, stdout: out.join(""), stderr: err.join(""), result: await result };
  } catch (error) {
    const code =
      error instanceof Errors.CLIError || error instanceof Errors.ExitError
        ? (error.oclif.exit ?? 1)
        : 1;
    return { code, stdout: out.join(""), stderr: err.join(""), error: error as Error };
  } finally {
    process.stdout.write = stdoutWrite;
    process.stderr.write = stderrWrite;
    process.exitCode = exitCodeBefore;
  }
}

/** Runs `work` with `env` added to process.env (what a command reads), then restores it. */
export async function withEnv<T>(env: Record<string, string>, work: () => Promise<T>): Promise<T> {
  const saved = Object.fromEntries(Object.keys(env).map((key) => [key, process.env[key]]));
  Object.assign(process.env, env);
  try {
    return await work();
  } finally {
    for (const [key, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[key];
      else process.env[key] = value;
    }
  }
}
