// Golden-file harness (STYLE.md "Golden files"): fixtures/<case>/input.yaml (one org per YAML
// document, optional options.yaml for the gateway) compiles to exactly fixtures/<case>/expected/**.
// Compiler diagnostics are output too: expected/diagnostics.txt.
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { dirname, join, relative } from "node:path";
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

export const FIXTURES = new URL("../../fixtures/", import.meta.url).pathname;
export const UPDATE = process.env.UPDATE_GOLDEN === "1";

const ajv = new Ajv({ useDefaults: true, allErrors: true });
const validateOrg = ajv.compile<OrgState>(OrgStateSchema);

export function listCases(): string[] {
  return readdirSync(FIXTURES)
    .filter((name) => existsSync(join(FIXTURES, name, "input.yaml")))
    .sort();
}

/** Reads a case's orgs, filled with the schema's defaults; `behindEdge` from options.yaml. */
export function loadCase(name: string): {
  orgs: OrgState[];
  gateway: GatewayOptions;
  behindEdge: boolean;
} {
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
    behindEdge: options.behind_edge === true,
  };
}

export function compileCase(name: string): CompileResult {
  const { orgs, gateway, behindEdge } = loadCase(name);
  return compileAll(orgs, gateway, { behindEdge });
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
  const { orgs, behindEdge } = loadCase(name);
  for (const org of orgs) {
    const result = compileOrgPjsipRealtime(org, { behindEdge });
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

function listFiles(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir).flatMap((entry) => {
    const full = join(dir, entry);
    return statSync(full).isDirectory() ? listFiles(full) : [full];
  });
}

/**
 * Compares a case with its expected tree (`expected/`, or `realtime/` for the realtime form);
 * returns the problems (empty = pass). Rewrites under UPDATE_GOLDEN=1.
 */
export function checkCase(
  name: string,
  output: Map<string, string>,
  tree: "expected" | "realtime" | "edge" = "expected",
): string[] {
  const expectedDir = join(FIXTURES, name, tree);
  if (UPDATE) {
    rmSync(expectedDir, { recursive: true, force: true });
    for (const [path, content] of output) {
      mkdirSync(dirname(join(expectedDir, path)), { recursive: true });
      writeFileSync(join(expectedDir, path), content);
    }
    return [];
  }
  const problems: string[] = [];
  const expected = new Set(listFiles(expectedDir).map((file) => relative(expectedDir, file)));
  for (const [path, content] of output) {
    if (!expected.has(path)) {
      problems.push(`${name}: no expected file for output ${path}`);
      continue;
    }
    const want = readFileSync(join(expectedDir, path), "utf8");
    if (want !== content) {
      problems.push(createTwoFilesPatch(`${tree}/${path}`, `actual/${path}`, want, content));
    }
  }
  for (const path of expected) {
    if (!output.has(path))
      problems.push(`${name}: orphan expected file ${path} (no output produced it)`);
  }
  return problems;
}

/**
 * One expected text file beside a case (the call-flow goldens: simulate, lint, impact, graph):
 * rewritten under UPDATE_GOLDEN=1, else compared, failing with a unified diff and the command.
 */
export function expectGoldenText(file: string, actual: string): void {
  if (UPDATE) {
    writeFileSync(file, actual);
    return;
  }
  const want = existsSync(file) ? readFileSync(file, "utf8") : null;
  if (want === actual) return;
  throw new Error(
    want === null
      ? `${file}: no expected file. Run 'UPDATE_GOLDEN=1 npm test' to write it, and review it.`
      : `${createTwoFilesPatch(file, "actual", want, actual)}\nRun 'UPDATE_GOLDEN=1 npm test' if the new output is correct, and review 'git diff fixtures/'.`,
  );
}
