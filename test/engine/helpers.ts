// Shared by the engine suites: the install from PBX_ASTERISK_PREFIX (scripts/test.ts refuses to
// run this directory without it), compiled fixtures, and a suite-scoped Asterisk that is always
// stopped by PID, even when a test fails.
import { compileAll } from "../../src/compiler/index.js";
import type { CompiledFile } from "../../src/compiler/types.js";
import { FileDeployLog } from "../../src/deploy/deploy-log.js";
import { Deployer } from "../../src/deploy/deployer.js";
import { type AmiTarget, createAmiTarget } from "../../src/engine/ami-target.js";
import {
  type AsteriskInstall,
  asteriskInstallFromEnv,
  HOW_TO_PROVIDE,
} from "../../src/engine/testing/asterisk-install.js";
import {
  type AsteriskInstance,
  type AsteriskInstanceOptions,
  startAsterisk,
} from "../../src/engine/testing/asterisk-instance.js";
import { loadOrgPaths, loadOrgSources } from "../../src/model/files.js";
import { encodeWav } from "../../src/tts/wav.js";
import { compileCase, loadCase } from "../compiler/golden.js";

export const ROOT = new URL("../../", import.meta.url).pathname;

export function engineInstall(): AsteriskInstall {
  const install = asteriskInstallFromEnv();
  if (!install) throw new Error(HOW_TO_PROVIDE);
  return install;
}

/** Boots an engine with `files` (generated tree) for one test or suite. */
export function boot(
  files: readonly CompiledFile[],
  options: Omit<AsteriskInstanceOptions, "install" | "files"> = {},
): Promise<AsteriskInstance> {
  return startAsterisk({ install: engineInstall(), files, ...options });
}

/** Runs `body` with a fresh engine and stops it afterwards, whatever happens. */
export async function withEngine<T>(
  files: readonly CompiledFile[],
  body: (engine: AsteriskInstance) => Promise<T>,
  options: Omit<AsteriskInstanceOptions, "install" | "files"> = {},
): Promise<T> {
  const engine = await boot(files, options);
  try {
    return await body(engine);
  } finally {
    await engine.stop();
  }
}

/** A golden fixture's compiled files (throws when the compiler reports an error). */
export function fixtureFiles(name: string): CompiledFile[] {
  const result = compileCase(name);
  const errors = result.diagnostics.filter((d) => d.severity === "error");
  if (errors.length > 0) throw new Error(`${name}: ${errors.map((d) => d.message).join("; ")}`);
  return result.files;
}

/** A second of silence as the engine plays it natively (8 kHz, 16-bit, mono WAV). */
export function silentWav(): Uint8Array {
  return encodeWav(new Int16Array(8000), 8000);
}

/** The music-on-hold files a fixture's orgs list, as `sounds` for `boot` (silence each). */
export function fixtureSounds(name: string): Record<string, Uint8Array> {
  const sounds: Record<string, Uint8Array> = {};
  for (const org of loadCase(name).orgs) {
    for (const file of org.music_on_hold ?? []) {
      sounds[`moh/${org.org.id}/${file}.wav`] = silentWav();
    }
  }
  return sounds;
}

/** The example orgs (orgs/*.yaml) compiled, secrets from the given environment. */
export async function exampleOrgFiles(env: Record<string, string> = {}): Promise<CompiledFile[]> {
  const loaded = await loadOrgPaths([`${ROOT}orgs`], env);
  const errors = loaded.diagnostics.filter((d) => d.severity === "error");
  if (errors.length > 0) throw new Error(errors.map((d) => d.message).join("; "));
  const result = compileAll(
    loaded.orgs.map((org) => org.state),
    { environment: "prod", staging_endpoint: "staging-tunnel" },
  );
  return result.files;
}

/** Org YAML documents (one org each) compiled with the gateway and top-level files. */
export function compileYaml(...yamls: string[]): CompiledFile[] {
  const loaded = loadOrgSources(
    yamls.map((text, index) => ({ file: `org-${index}.yaml`, text })),
    {},
  );
  const errors = loaded.diagnostics.filter((d) => d.severity === "error");
  if (errors.length > 0) throw new Error(errors.map((d) => `${d.path}: ${d.message}`).join("; "));
  return compileAll(
    loaded.orgs.map((o) => o.state),
    { environment: "prod", staging_endpoint: "staging-tunnel" },
  ).files;
}

/** A deployer into the engine's generated tree, reloading it over its AMI. Close the target. */
export function engineDeployer(engine: AsteriskInstance): {
  target: AmiTarget;
  deployer: Deployer;
} {
  const target = createAmiTarget({
    host: "127.0.0.1",
    port: engine.amiPort,
    username: engine.amiUsername,
    secret: engine.amiSecret,
    reconnectInitialMs: 50,
  });
  const deployer = new Deployer({
    engineDir: engine.generatedDir,
    target,
    log: new FileDeployLog(engine.generatedDir),
  });
  return { target, deployer };
}

/** Polls `probe` until it answers something other than null/false; throws after `timeoutMs`. */
export async function until<T>(
  what: string,
  probe: () => Promise<T | null | false> | T | null | false,
  timeoutMs = 20_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== null && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    // Polling the engine's own state: there is no clock to inject into Asterisk.
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
