// Which Chromium the browser tests get, and how the npm-shipped one is unpacked (on a small fake
// package, so these run in milliseconds; docs-pages.test.ts drives the real one).
import { execFileSync } from "node:child_process";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { brotliCompressSync } from "node:zlib";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { CHROMIUM_PATH_VARIABLE, type LocateOptions, locateChromium } from "./locate-chromium.js";
import {
  findNpmChromiumPackage,
  type NpmChromiumPackage,
  type UnpackedChromium,
  unpackNpmChromium,
} from "./npm-chromium.js";

const scratch = mkdtempSync(join(tmpdir(), "pbx-chromium-"));
const someFile = join(scratch, "some-chromium");
writeFileSync(someFile, "");
test.after(() => rmSync(scratch, { recursive: true, force: true }));

const FAKE_PACKAGE: NpmChromiumPackage = { version: "1.0.0", binDir: "/nowhere" };
const FAKE_UNPACKED: UnpackedChromium = {
  executablePath: "/cache/1.0.0/chromium",
  libDir: "/cache/1.0.0/lib",
  fontConfigFile: "/cache/1.0.0/fonts.conf",
};

function notCalled(what: string) {
  return () => {
    throw new Error(`${what} must not be looked at`);
  };
}

test("PBX_CHROMIUM_PATH wins over the npm package and the system browser", async () => {
  const options: LocateOptions = {
    env: { [CHROMIUM_PATH_VARIABLE]: someFile },
    findNpmPackage: notCalled("the npm package"),
    systemCandidates: [someFile],
  };
  const located = await locateChromium(options);
  assert.is(located.source, "env");
  assert.is(located.executablePath, someFile);
});

test("a PBX_CHROMIUM_PATH that does not exist is an error, not a fallback", async () => {
  const missing = join(scratch, "missing");
  try {
    await locateChromium({ env: { [CHROMIUM_PATH_VARIABLE]: missing }, systemCandidates: [] });
    assert.unreachable("should have thrown");
  } catch (error) {
    assert.match((error as Error).message, `${CHROMIUM_PATH_VARIABLE}=${missing}: no such file`);
  }
});

test("the npm browser comes before the system one and runs on its bundled libraries", async () => {
  const located = await locateChromium({
    env: { LD_LIBRARY_PATH: "/opt/other", PATH: "/usr/bin" },
    findNpmPackage: () => FAKE_PACKAGE,
    unpack: async (pkg) => {
      assert.is(pkg, FAKE_PACKAGE);
      return FAKE_UNPACKED;
    },
    systemCandidates: [someFile],
  });
  assert.is(located.source, "npm");
  assert.is(located.executablePath, FAKE_UNPACKED.executablePath);
  assert.is(located.env.LD_LIBRARY_PATH, "/cache/1.0.0/lib:/opt/other");
  assert.is(located.env.FONTCONFIG_FILE, "/cache/1.0.0/fonts.conf");
  assert.is(located.env.PATH, "/usr/bin");
});

test("without the npm package the first existing system browser is used", async () => {
  const located = await locateChromium({
    env: {},
    findNpmPackage: () => null,
    systemCandidates: [join(scratch, "absent"), someFile],
  });
  assert.is(located.source, "system");
  assert.is(located.executablePath, someFile);
});

test("with no browser at all the error says how to get one", async () => {
  try {
    await locateChromium({ env: {}, findNpmPackage: () => null, systemCandidates: [] });
    assert.unreachable("should have thrown");
  } catch (error) {
    assert.match((error as Error).message, "npm ci");
    assert.match((error as Error).message, CHROMIUM_PATH_VARIABLE);
  }
});

test("the npm package is installed here, and skipped where it has no binary", () => {
  assert.is(findNpmChromiumPackage("linux", "arm64"), null);
  assert.is(findNpmChromiumPackage("darwin", "x64"), null);
  if (process.platform !== "linux" || process.arch !== "x64") return;
  const pkg = findNpmChromiumPackage();
  assert.ok(pkg, "@sparticuz/chromium is a devDependency: npm ci installs it");
  assert.ok(existsSync(join(pkg.binDir, "chromium.br")));
  assert.match(pkg.version, /^\d+\.\d+\.\d+$/);
});

/** A package laid out like @sparticuz/chromium's bin/, with tiny stand-ins for its files. */
function fakeBinDir(): string {
  const dir = mkdtempSync(join(scratch, "bin-"));
  writeFileSync(join(dir, "chromium.br"), brotliCompressSync("#!/bin/sh\necho fake chromium\n"));
  const tarOf = (name: string, files: Record<string, string>) => {
    const src = mkdtempSync(join(scratch, `${name}-`));
    for (const [path, text] of Object.entries(files)) {
      mkdirSync(join(src, path, ".."), { recursive: true });
      writeFileSync(join(src, path), text);
    }
    const tar = execFileSync("tar", ["-c", "-C", src, "."]);
    writeFileSync(join(dir, `${name}.tar.br`), brotliCompressSync(tar));
  };
  tarOf("al2023", { "lib/libnss3.so": "nss" });
  tarOf("fonts", { "fonts/Open_Sans/OpenSans-Regular.ttf": "font", "fonts.conf": "lambda" });
  tarOf("swiftshader", { "libGLESv2.so": "gl" });
  return dir;
}

test("unpacking writes one complete directory per version and removes older ones", async () => {
  const root = join(scratch, "cache");
  const binDir = fakeBinDir();
  const old = await unpackNpmChromium({ version: "1.0.0", binDir }, root);
  const [a, b] = await Promise.all([
    unpackNpmChromium({ version: "2.0.0", binDir }, root),
    unpackNpmChromium({ version: "2.0.0", binDir }, root),
  ]);
  assert.equal(a, b);
  assert.equal(readdirSync(root), ["2.0.0"], "no partial copy, no older version left");
  assert.not.ok(existsSync(old.executablePath));

  assert.is(a!.executablePath, join(root, "2.0.0", "chromium"));
  assert.is(execFileSync(a!.executablePath).toString(), "fake chromium\n");
  assert.is(readFileSync(join(a!.libDir, "libnss3.so"), "utf8"), "nss");
  assert.ok(existsSync(join(root, "2.0.0", "libGLESv2.so")), "SwiftShader beside the binary");
  assert.not.ok(existsSync(join(root, "2.0.0", "al2023.tar")), "no inflated archive left");
  const fonts = readFileSync(a!.fontConfigFile, "utf8");
  assert.match(fonts, `<dir>${join(root, "2.0.0", "fonts")}</dir>`);
  assert.ok(existsSync(join(root, "2.0.0", "fonts/Open_Sans/OpenSans-Regular.ttf")));
});

test.run();
