// Unpacks the headless Chromium that the `@sparticuz/chromium` npm package carries inside its
// tarball (brotli-compressed, Linux x64), so the browser tests need nothing but `npm ci`.
// The package's own `executablePath()` is not used: it inflates into a fixed `/tmp/chromium`
// shared by every checkout and version on the machine, and reuses whatever it finds there.
// Here each package version gets its own directory under node_modules/.cache, written under a
// temporary name and renamed into place, so concurrent test runs never see half a binary.
import { spawn } from "node:child_process";
import {
  createReadStream,
  createWriteStream,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { pipeline } from "node:stream/promises";
import { createBrotliDecompress } from "node:zlib";

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

/**
 * The installed package, or null where it is absent or carries no binary for this machine
 * (the tarball holds Linux x64 only).
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
  // The entry is <package>/build/index.js; package.json is not in its export map.
  const packageDir = dirname(dirname(entry));
  const binDir = join(packageDir, "bin");
  if (!existsSync(join(binDir, "chromium.br"))) return null;
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

/** Tar is in every Debian base system (priority required), so no npm tar library is needed. */
async function inflateTar(source: string, targetDir: string): Promise<void> {
  const tar = spawn("tar", ["-x", "-C", targetDir], { stdio: ["pipe", "ignore", "pipe"] });
  let stderr = "";
  tar.stderr.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const exited = new Promise<number | null>((resolve, reject) => {
    tar.once("error", reject);
    tar.once("close", resolve);
  });
  await pipeline(createReadStream(source), createBrotliDecompress(), tar.stdin);
  const code = await exited;
  if (code !== 0) throw new Error(`tar -x of ${source} failed (${code}): ${stderr.trim()}`);
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
  } catch (error) {
    rmSync(work, { recursive: true, force: true });
    throw error;
  }
  return layout(finalDir);
}
