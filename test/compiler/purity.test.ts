// The compiler is pure (DESIGN.md): it may import only its own modules and src/model, and
// nothing that reaches the file system, the clock, the environment or the network.
import { readdirSync, readFileSync } from "node:fs";
import { test } from "uvu";
import * as assert from "uvu/assert";

const dir = new URL("../../src/compiler/", import.meta.url);
// The compiler's own modules and those of its subdirectories (edge/: the Kamailio edge), each with
// the relative path that reaches src/model from it.
const files = readdirSync(dir, { recursive: true })
  .map(String)
  .filter((f) => f.endsWith(".ts"));
const modelPrefix = (file: string) => "../".repeat(file.split("/").length);
const modelAllowed = (file: string, target: string) =>
  target.startsWith(`${modelPrefix(file)}model/`) && /\/model\/[a-z-]+\.js$/.test(target);
const withinCompiler = (file: string, target: string) =>
  target.startsWith("./") ||
  (file.includes("/") && target.startsWith("../") && !target.startsWith(modelPrefix(file)));

test("compiler modules import only the compiler, src/model and type-only packages", () => {
  for (const file of files) {
    const source = readFileSync(new URL(file, dir), "utf8");
    for (const match of source.matchAll(/^import\s+(type\s+)?[^;]*?from\s+"([^"]+)";/gms)) {
      const typeOnly = Boolean(match[1]);
      const target = match[2]!;
      const ok =
        withinCompiler(file, target) ||
        modelAllowed(file, target) ||
        (typeOnly && target === "@sinclair/typebox");
      assert.ok(ok, `${file} imports ${target}`);
    }
  }
});

test("the model modules the compiler uses are pure too", () => {
  const used = new Set<string>();
  for (const file of files) {
    const source = readFileSync(new URL(file, dir), "utf8");
    for (const match of source.matchAll(/from\s+"(?:\.\.\/)+model\/([a-z-]+)\.js"/g))
      used.add(match[1]!);
  }
  for (const name of used) {
    const source = readFileSync(new URL(`../../src/model/${name}.ts`, import.meta.url), "utf8");
    assert.not.match(source, /from\s+"node:/, `model/${name}.ts imports a node: module`);
    assert.not.match(
      source,
      /process\.env|Date\.now|Math\.random|new Date\(/,
      `model/${name}.ts is not pure`,
    );
  }
});

test("the model never imports the compiler (dependencies point one way)", () => {
  const modelDir = new URL("../../src/model/", import.meta.url);
  for (const file of readdirSync(modelDir).filter((f) => f.endsWith(".ts"))) {
    const source = readFileSync(new URL(file, modelDir), "utf8");
    assert.not.match(
      source,
      /from\s+"\.\.\/(compiler|store|api|deploy|domain|cli)\//,
      `model/${file}`,
    );
  }
});

test.run();
