// Chooses the Chromium that the browser tests drive, in this order:
//   1. PBX_CHROMIUM_PATH, an explicit binary (a wrong path is an error, never a silent fallback);
//   2. the headless Chromium shipped inside the `@sparticuz/chromium` npm package (Linux x64),
//      so a fresh `npm ci` is enough;
//   3. Debian's `chromium`, for machines the npm binary does not cover (arm64).
import { existsSync } from "node:fs";
import {
  findNpmChromiumPackage,
  type NpmChromiumPackage,
  type UnpackedChromium,
  unpackNpmChromium,
} from "./npm-chromium.js";

export const CHROMIUM_PATH_VARIABLE = "PBX_CHROMIUM_PATH";
export const SYSTEM_CHROMIUM_CANDIDATES: readonly string[] = ["/usr/bin/chromium"];

export interface LocatedChromium {
  source: "env" | "npm" | "system";
  executablePath: string;
  /** Environment for the browser process (the npm binary needs its bundled libraries). */
  env: Record<string, string | undefined>;
}

export interface LocateOptions {
  env?: Record<string, string | undefined>;
  findNpmPackage?: () => NpmChromiumPackage | null;
  unpack?: (pkg: NpmChromiumPackage) => Promise<UnpackedChromium>;
  systemCandidates?: readonly string[];
}

export const HOW_TO_PROVIDE_CHROMIUM = [
  "No Chromium for the browser tests. `npm ci` installs one (@sparticuz/chromium, Linux x64);",
  `elsewhere set ${CHROMIUM_PATH_VARIABLE} to a Chromium binary or apt-get install -y chromium.`,
].join("\n");

function prependPath(directory: string, current: string | undefined): string {
  return current ? `${directory}:${current}` : directory;
}

export async function locateChromium(options: LocateOptions = {}): Promise<LocatedChromium> {
  const env = options.env ?? process.env;
  const explicit = env[CHROMIUM_PATH_VARIABLE];
  if (explicit) {
    if (!existsSync(explicit)) {
      throw new Error(`${CHROMIUM_PATH_VARIABLE}=${explicit}: no such file`);
    }
    return { source: "env", executablePath: explicit, env: { ...env } };
  }

  const pkg = (options.findNpmPackage ?? findNpmChromiumPackage)();
  if (pkg) {
    const unpacked = await (options.unpack ?? unpackNpmChromium)(pkg);
    return {
      source: "npm",
      executablePath: unpacked.executablePath,
      env: {
        ...env,
        // Bundled NSS first: the binary then runs the same on a machine with no libnss3.
        LD_LIBRARY_PATH: prependPath(unpacked.libDir, env.LD_LIBRARY_PATH),
        FONTCONFIG_FILE: unpacked.fontConfigFile,
      },
    };
  }

  const system = (options.systemCandidates ?? SYSTEM_CHROMIUM_CANDIDATES).find((path) =>
    existsSync(path),
  );
  if (system) return { source: "system", executablePath: system, env: { ...env } };
  throw new Error(HOW_TO_PROVIDE_CHROMIUM);
}
