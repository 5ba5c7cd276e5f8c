// Lints the served OpenAPI document (/api-spec.json) with Spectral (spectral:oas) and Redocly
// (recommended), the two linters client generators and reviewers use. Both must report 0 errors
// and 0 warnings; `npm test` runs this. The document is built from the route definitions exactly
// as the server builds it, written to a temporary file, and linted there.
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { buildOpenApiDocument } from "../src/api/openapi.js";
import { allRoutes } from "../src/api/routes/index.js";

const root = new URL("..", import.meta.url).pathname;
const dir = mkdtempSync(join(tmpdir(), "pbxctl-openapi-"));
const documentFile = join(dir, "api-spec.json");
const spectralRuleset = join(dir, ".spectral.json");
const redoclyConfig = join(dir, "redocly.yaml");

const document = buildOpenApiDocument(allRoutes, {
  baseUrl: "https://pbx.example.test",
  version: "0.0.0",
});
writeFileSync(documentFile, JSON.stringify(document, null, 2));
writeFileSync(spectralRuleset, JSON.stringify({ extends: ["spectral:oas"] }));
writeFileSync(redoclyConfig, "extends:\n  - recommended\n");

function run(name: string, bin: string, args: string[]): boolean {
  const result = spawnSync(join(root, "node_modules/.bin", bin), args, {
    cwd: dir,
    stdio: "inherit",
  });
  const ok = result.status === 0;
  console.log(`${name}: ${ok ? "clean" : "FAILED"}`);
  return ok;
}

// --fail-severity=hint: a warning fails as surely as an error.
const spectral = run("spectral (spectral:oas)", "spectral", [
  "lint",
  documentFile,
  "--ruleset",
  spectralRuleset,
  "--fail-severity=hint",
]);
// --max-problems keeps the whole list; redocly exits non-zero on errors, and warnings are
// promoted below by parsing its summary.
const redocly = spawnSync(
  join(root, "node_modules/.bin", "redocly"),
  ["lint", documentFile, "--config", redoclyConfig, "--format=stylish", "--max-problems=1000"],
  { cwd: dir, encoding: "utf8" },
);
process.stdout.write(redocly.stdout);
process.stderr.write(redocly.stderr);
const redoclyClean =
  redocly.status === 0 &&
  !/warning/i.test(`${redocly.stdout}\n${redocly.stderr}`.replace(/0 warnings?/gi, ""));
console.log(`redocly (recommended): ${redoclyClean ? "clean" : "FAILED"}`);

rmSync(dir, { recursive: true, force: true });
process.exit(spectral && redoclyClean ? 0 : 1);
