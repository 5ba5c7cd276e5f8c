// Golden-file harness (STYLE.md "Golden files"): fixtures/<case>/input.yaml (one org per YAML
// document, optional options.yaml for the gateway) compiles to exactly fixtures/<case>/expected/**
// (an output shared with other cases is stored once in fixtures/shared/, golden-store.ts).
// Compiler diagnostics are output too: expected/diagnostics.txt. UPDATE_GOLDEN=1 never changes
// an accepted file: it writes what differs beside it (`expected.new/`, `expected.txt.new`) and
// prints the diff; `npm run golden:accept` (scripts/golden-accept.ts) accepts it.
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Ajv } from "ajv";
import { createTwoFilesPatch } from "diff";
import { parse, parseAllDocuments } from "yaml";
import {
  type CompileResult,
  compileAll,
  compileOrgPjsipRealtime,
  printRealtimeRows,
} from "../../src/compiler/index.js";
import type { GatewayOptions } from "../../src/model/gateway.js";
import { type OrgState, OrgStateSchema } from "../../src/model/org-state.js";
import { goldenTree, NEW_SUFFIX, readTree, writePlainTree } from "./golden-store.js";

export const FIXTURES = new URL("../../fixtures/", import.meta.url).pathname;
export const UPDATE = process.env.UPDATE_GOLDEN === "1";

const ajv = new Ajv({ useDefaults: true, allErrors: true });
const validateOrg = ajv.compile<OrgState>(OrgStateSchema);

export function listCases(): string[] {
  return readdirSync(FIXTURES)
    .filter((name) => existsSync(join(FIXTURES, name, "input.yaml")))
    .sort();
}

/** Reads a case's orgs, filled with the schema's defaults. */
export function loadCase(name: string): { orgs: OrgState[]; gateway: GatewayOptions } {
  const dir = join(FIXTURES, name);
  const orgs = parseAllDocuments(readFileSync(join(dir, "input.yaml"), "utf8")).map(
    (doc, index) => {
      const value = doc.toJS();
      if (!validateOrg(value)) {
        throw new Error(`${name} document ${index}: ${ajv.errorsText(validateOrg.errors)}`);
      }
      return value;
    },
  );
  const optionsFile = join(dir, "options.yaml");
  const options = existsSync(optionsFile) ? parse(readFileSync(optionsFile, "utf8")) : {};
  return {
    orgs,
    gateway: {
      environment: options.environment ?? "prod",
      staging_endpoint: options.staging_endpoint ?? "staging-tunnel",
      ...(options.staging_tunnels ? { staging_tunnels: options.staging_tunnels } : {}),
    },
  };
}

export function compileCase(name: string): CompileResult {
  const { orgs, gateway } = loadCase(name);
  return compileAll(orgs, gateway);
}

/** The case's output as path -> text, diagnostics included. */
export function caseOutput(result: CompileResult): Map<string, string> {
  const output = new Map(result.files.map((file) => [file.path, file.content]));
  if (result.diagnostics.length > 0) {
    output.set(
      "diagnostics.txt",
      result.diagnostics.map((d) => `${d.severity} ${d.path}: ${d.message}\n`).join(""),
    );
  }
  return output;
}

/**
 * The case's PJSIP in realtime mode, as path -> text: per org its rows
 * (`orgs/<prefix>/pjsip.rows.json`) and the pjsip.conf of what stays a file, diagnostics included.
 */
export function realtimeCaseOutput(name: string): Map<string, string> {
  const output = new Map<string, string>();
  const diagnostics: string[] = [];
  for (const org of loadCase(name).orgs) {
    const result = compileOrgPjsipRealtime(org);
    output.set(
      result.file.path.replace(/pjsip\.conf$/, "pjsip.rows.json"),
      printRealtimeRows(result.rows),
    );
    output.set(result.file.path, result.file.content);
    for (const d of result.diagnostics) diagnostics.push(`${d.severity} ${d.path}: ${d.message}\n`);
  }
  if (diagnostics.length > 0) output.set("diagnostics.txt", diagnostics.join(""));
  return output;
}

/** What to run once the new outputs written under UPDATE_GOLDEN=1 are reviewed. */
export const ACCEPT_HINT =
  "Run 'UPDATE_GOLDEN=1 npm test' to write the new output beside the expected one (*.new), review it, then 'npm run golden:accept'.";

/**
 * Compares a case with its expected tree (`expected/`, or `realtime/` / `edge/`); returns the
 * problems (empty = pass). Under UPDATE_GOLDEN=1 a tree that differs is written whole to
 * `<tree>.new/` beside it, the diff printed, and the case passes; one that matches loses any
 * stale `<tree>.new/`.
 */
export function checkCase(
  name: string,
  output: Map<string, string>,
  tree: "expected" | "realtime" | "edge" = "expected",
): string[] {
  const stored = goldenTree(join(FIXTURES, name), tree);
  const expected = readTree(stored);
  const problems: string[] = [];
  for (const [path, content] of output) {
    const want = expected.get(path);
    if (want === undefined) {
      problems.push(`${name}: no expected file for output ${path}`);
      continue;
    }
    if (want !== content) {
      problems.push(createTwoFilesPatch(`${tree}/${path}`, `actual/${path}`, want, content));
    }
  }
  for (const path of expected.keys()) {
    if (!output.has(path))
      problems.push(`${name}: orphan expected file ${path} (no output produced it)`);
  }
  if (!UPDATE) return problems;
  const fresh = `${stored.dir}${NEW_SUFFIX}`;
  if (problems.length === 0) {
    rmSync(fresh, { recursive: true, force: true });
    return [];
  }
  writePlainTree(fresh, output);
  console.log(`${problems.join("\n")}\n${name}/${tree}${NEW_SUFFIX}/ written for review.`);
  return [];
}

/**
 * One expected text file beside a case (the call-flow goldens: simulate, lint, impact, graph):
 * compared, failing with a unified diff and the command; under UPDATE_GOLDEN=1 a new output is
 * written beside it (`<file>.new`) and printed for review instead.
 */
export function expectGoldenText(file: string, actual: string): void {
  const want = existsSync(file) ? readFileSync(file, "utf8") : null;
  const fresh = `${file}${NEW_SUFFIX}`;
  if (want === actual) {
    if (UPDATE) rmSync(fresh, { force: true });
    return;
  }
  const problem =
    want === null
      ? `${file}: no expected file.`
      : createTwoFilesPatch(file, "actual", want, actual);
  if (UPDATE) {
    writeFileSync(fresh, actual);
    console.log(`${problem}\n${fresh} written for review.`);
    return;
  }
  throw new Error(`${problem}\n${ACCEPT_HINT}`);
}
