// Finds an Asterisk 22 install for the engine tests and `bench:engine` from one environment
// variable, PBX_ASTERISK_PREFIX: either a relocatable install prefix (the shared build unpacked:
// `<prefix>/sbin/asterisk`, `<prefix>/lib/asterisk/modules`) or a distro layout where the binary
// and the modules live apart (`PBX_ASTERISK_PREFIX=/`: `/usr/sbin/asterisk`,
// `/usr/lib/<triplet>/asterisk/modules`, sounds in `/usr/share/asterisk`).
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";

export const ASTERISK_PREFIX_VARIABLE = "PBX_ASTERISK_PREFIX";

export interface AsteriskInstall {
  prefix: string;
  /** The `asterisk` binary. */
  binary: string;
  /** Directory of the loadable modules (`app_dial.so`, ...). */
  modulesDir: string;
  /** astdatadir: holds `sounds/` (and `moh/`, `documentation/`). */
  dataDir: string;
}

/** How to provide an install, for the message of a run without one. */
export const HOW_TO_PROVIDE = [
  `${ASTERISK_PREFIX_VARIABLE} is not set: the engine tests need an Asterisk 22 install.`,
  "Either unpack the project's build and point at it:",
  "  tar -xJf ../shared/asterisk/asterisk-22.10.1-debian12-amd64.tar.xz -C /opt/pbx-asterisk",
  `  ${ASTERISK_PREFIX_VARIABLE}=/opt/pbx-asterisk/asterisk npm run test:engine`,
  "or name a distro install's root (binary and modules apart):",
  `  ${ASTERISK_PREFIX_VARIABLE}=/ npm run test:engine`,
  "(see ../shared/asterisk/README.md for the Debian packages it needs: sounds, libraries).",
].join("\n");

function firstExisting(candidates: readonly string[]): string | null {
  return candidates.find((path) => existsSync(path)) ?? null;
}

/** Module directories under `<root>/usr/lib/<triplet>/asterisk/modules` (Debian multiarch). */
function multiarchModuleDirs(root: string): string[] {
  const lib = join(root, "usr/lib");
  let entries: string[] = [];
  try {
    entries = readdirSync(lib);
  } catch {
    return [];
  }
  return entries.map((entry) => join(lib, entry, "asterisk/modules"));
}

/** The install under `prefix`; throws with what is missing. */
export function resolveAsteriskInstall(prefix: string): AsteriskInstall {
  const binary = firstExisting(
    ["sbin/asterisk", "usr/sbin/asterisk", "bin/asterisk", "usr/bin/asterisk"].map((p) =>
      join(prefix, p),
    ),
  );
  if (!binary) throw new Error(`no asterisk binary under ${prefix} (looked in sbin/, usr/sbin/)`);
  const modulesDir = firstExisting([
    ...["lib/asterisk/modules", "lib64/asterisk/modules", "usr/lib/asterisk/modules"].map((p) =>
      join(prefix, p),
    ),
    ...multiarchModuleDirs(prefix),
  ]);
  if (!modulesDir || !existsSync(join(modulesDir, "app_dial.so"))) {
    throw new Error(`no Asterisk modules (app_dial.so) under ${prefix}`);
  }
  const dataDir = firstExisting(
    ["var/lib/asterisk/sounds", "usr/share/asterisk/sounds", "var/lib/asterisk/sounds"].map((p) =>
      join(prefix, p),
    ),
  );
  return {
    prefix,
    binary,
    modulesDir,
    dataDir: dataDir ? join(dataDir, "..") : join(prefix, "var/lib/asterisk"),
  };
}

/** The install named by PBX_ASTERISK_PREFIX, or null when the variable is unset. */
export function asteriskInstallFromEnv(
  env: Readonly<Record<string, string | undefined>> = process.env,
): AsteriskInstall | null {
  const prefix = env[ASTERISK_PREFIX_VARIABLE];
  if (!prefix) return null;
  return resolveAsteriskInstall(prefix);
}

/**
 * The install for `npm run test:engine` and `bench:engine`: without PBX_ASTERISK_PREFIX, or with
 * one that holds no Asterisk, prints how to provide one and exits 1 (never a silent skip).
 */
export function asteriskInstallOrExit(
  env: Readonly<Record<string, string | undefined>> = process.env,
): AsteriskInstall {
  try {
    const install = asteriskInstallFromEnv(env);
    if (install) return install;
    console.error(HOW_TO_PROVIDE);
  } catch (error) {
    console.error(`${ASTERISK_PREFIX_VARIABLE}: ${(error as Error).message}\n\n${HOW_TO_PROVIDE}`);
  }
  process.exit(1);
}
