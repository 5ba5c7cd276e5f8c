// Unpacks the headless Chromium that the `@sparticuz/chromium` npm package carries inside its
// tarball (brotli-compressed, Linux x64), so the browser tests need nothing but `npm ci`.
// The package's own `executablePath()` is not used: it inflates into a fixed `/tmp/chromium`
// shared by every checkout and version on the machine, and reuses whatever it finds there.
// Here each package version gets its own directory under node_modules/.cache, written under a
// temporary name and renamed into place, so concurrent test runs never see half a binary.
import { execFile } from "node:child_process";
import {
  createReadStream,
  createWriteStream,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { createRequire } from "node:module";
import { basename, dirname, join } from "node:path";
import { pipeline } from "node:stream/promises";
import { promisify } from "node:util";
import { createBrotliDecompress } from "node:zlib";

const run = promisify(execFile);

export const NPM_CHROMIUM_PACKAGE = "@sparticuz/chromium";

/** Where the unpacked browsers live, one directory per package version. */
export const DEFAULT_UNPACK_ROOT = new URL(
  "../../node_modules/.cache/pbxctl-chromium",
  import.meta.url,
).pathname;

export interface NpmChromiumPackage {
  version: string;
  /** The package's `bin/` directory: `chromium.br`, `al2023.tar.br`, `fonts.tar.br`, ... */
  binDir: string;
}

export interface UnpackedChromium {
  executablePath: string;
  /** NSS, NSPR and expat, the only libraries the binary links beyond libc and libgcc_s. */
  libDir: string;
  /** A fontconfig file naming only the package's fonts, so rendering is the same everywhere. */
  fontConfigFile: string;
}

/** The directory of the package that owns `file`: the nearest package.json naming it. */
function packageDirOf(file: string, name: string): string {
  for (let dir = dirname(file); dir !== dirname(dir); dir = dirname(dir)) {
    const manifest = join(dir, "package.json");
    if (existsSync(manifest) && JSON.parse(readFileSync(manifest, "utf8")).name === name) {
      return dir;
    }
  }
  throw new Error(`${file} is in no ${name} package`);
}

/**
 * The installed package, or null where it is not installed or carries no binary for this
 * machine (the tarball holds Linux x64 only). Installed but without its binary is an error:
 * falling back to another browser would hide it.
 */
export function findNpmChromiumPackage(
  platform: string = process.platform,
  arch: string = process.arch,
): NpmChromiumPackage | null {
  if (platform !== "linux" || arch !== "x64") return null;
  let entry: string;
  try {
    entry = createRequire(import.meta.url).resolve(NPM_CHROMIUM_PACKAGE);
  } catch {
    return null;
  }
  // The entry's place inside the package changes between versions; its package.json does not.
  const packageDir = packageDirOf(entry, NPM_CHROMIUM_PACKAGE);
  const binDir = join(packageDir, "bin");
  if (!existsSync(join(binDir, "chromium.br"))) {
    throw new Error(`${NPM_CHROMIUM_PACKAGE} in ${packageDir} has no bin/chromium.br`);
  }
  const { version } = JSON.parse(readFileSync(join(packageDir, "package.json"), "utf8")) as {
    version: string;
  };
  return { version, binDir };
}

function layout(dir: string): UnpackedChromium {
  return {
    executablePath: join(dir, "chromium"),
    libDir: join(dir, "lib"),
    fontConfigFile: join(dir, "fonts.conf"),
  };
}

async function inflateFile(source: string, target: string): Promise<void> {
  await pipeline(
    createReadStream(source),
    createBrotliDecompress(),
    createWriteStream(target, { mode: 0o755 }),
  );
}

/**
 * Inflated to a file first, then unpacked by tar: GNU tar stops reading at the end-of-archive
 * marker, which would cut a pipe short. Tar is in every Debian base system (priority required).
 */
async function inflateTar(source: string, targetDir: string): Promise<void> {
  const archive = join(targetDir, basename(source, ".br"));
  await inflateFile(source, archive);
  try {
    await run("tar", ["-x", "-f", archive, "-C", targetDir]);
  } finally {
    rmSync(archive, { force: true });
  }
}

function fontConfig(fontsDir: string, cacheDir: string): string {
  return [
    '<?xml version="1.0"?>',
    '<!DOCTYPE fontconfig SYSTEM "fonts.dtd">',
    "<fontconfig>",
    `  <dir>${fontsDir}</dir>`,
    `  <cachedir>${cacheDir}</cachedir>`,
    "</fontconfig>",
    "",
  ].join("\n");
}

/** An upgraded package leaves its predecessor's 200 MB behind otherwise. */
function removeOtherVersions(root: string, keep: string): void {
  for (const entry of readdirSync(root)) {
    if (entry !== keep && !entry.startsWith(`${keep}.partial-`)) {
      rmSync(join(root, entry), { recursive: true, force: true });
    }
  }
}

/** Unpacks the package's browser once per version; later calls return the existing copy. */
export async function unpackNpmChromium(
  pkg: NpmChromiumPackage,
  root: string = DEFAULT_UNPACK_ROOT,
): Promise<UnpackedChromium> {
  const finalDir = join(root, pkg.version);
  if (existsSync(join(finalDir, "fonts.conf"))) return layout(finalDir);

  mkdirSync(root, { recursive: true });
  const work = mkdtempSync(join(root, `${pkg.version}.partial-`));
  try {
    await Promise.all([
      inflateFile(join(pkg.binDir, "chromium.br"), join(work, "chromium")),
      // al2023.tar holds lib/: NSS, NSPR, expat, built for Amazon Linux 2023 (glibc 2.34).
      inflateTar(join(pkg.binDir, "al2023.tar.br"), work),
      // fonts.tar holds fonts/Open_Sans/*.ttf (and a fonts.conf for Lambda's paths, replaced).
      inflateTar(join(pkg.binDir, "fonts.tar.br"), work),
      // SwiftShader (libEGL, libGLESv2, Vulkan) beside the binary, where Chromium looks for it.
      inflateTar(join(pkg.binDir, "swiftshader.tar.br"), work),
    ]);
    // Written last: its presence in the final directory means the unpack is complete.
    writeFileSync(
      join(work, "fonts.conf"),
      fontConfig(join(finalDir, "fonts"), join(finalDir, "fonts-cache")),
    );
    try {
      renameSync(work, finalDir);
    } catch (error) {
      // Another run renamed its copy first: use that one.
      if (!existsSync(join(finalDir, "fonts.conf"))) throw error;
      rmSync(work, { recursive: true, force: true });
    }
    removeOtherVersions(root, pkg.version);
  } catch (error) {
    rmSync(work, { recursive: true, force: true });
    throw error;
  }
  return layout(finalDir);
}
