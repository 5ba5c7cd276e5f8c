// Loading org files: YAML text -> OrgState with every problem placed at `file:line:col`. The
// order is fixed: syntax, schema (defaults filled), omitted fields, secrets, semantic rules,
// then the checks that span several org files. File access goes through a narrow interface.
import { readdir, readFile, stat } from "node:fs/promises";
import { join } from "node:path";
import type { Diagnostic } from "./diagnostic.js";
import { isWithin } from "./diagnostic-path.js";
import { fillOmitted } from "./fill.js";
import type { OrgState } from "./org-state.js";
import { internationalDigits } from "./phone.js";
import { isUsableDid } from "./refs.js";
import { checkOrgFileSchema, OrgFileSchema, type SchemaDiagnostic } from "./schema-check.js";
import { resolveSecrets, type SecretEnvironment } from "./secrets.js";
import { identifyMatches, matchesOverlap } from "./trunk-identify.js";
import { validateOrg } from "./validate.js";
import {
  formatDiagnostic,
  parseYaml,
  positionOf,
  type SourceDiagnostic,
  type YamlSource,
  yamlData,
} from "./yaml.js";

export type { SourceDiagnostic } from "./yaml.js";
export { formatDiagnostic };

/** The text of one org file and the name it is reported under. */
export interface OrgSource {
  file: string;
  text: string;
}

/** An org that loaded far enough to have a state (it may still carry semantic errors). */
export interface LoadedOrg {
  file: string;
  state: OrgState;
}

export interface LoadResult {
  orgs: LoadedOrg[];
  /** Every problem of every file, sorted by file, line and column. */
  diagnostics: SourceDiagnostic[];
}

/** A path given to the loader that cannot be read (not a problem inside a file). */
export class OrgFileError extends Error {
  override readonly name = "OrgFileError";
}

/** Whether any diagnostic is an error (warnings do not stop a compile). */
export function hasErrors(diagnostics: readonly Diagnostic[]): boolean {
  return diagnostics.some((d) => d.severity === "error");
}

/**
 * Loads one org file's text. The state is null when the file is not valid YAML or does not
 * match the schema; otherwise it is complete (ids, context prefix, secrets resolved).
 */
export function loadOrgSource(
  source: OrgSource,
  env: SecretEnvironment,
): { state: OrgState | null; diagnostics: SourceDiagnostic[] } {
  const { state, diagnostics } = loadParsed(source, env);
  return { state, diagnostics };
}

function loadParsed(
  source: OrgSource,
  env: SecretEnvironment,
): { state: OrgState | null; diagnostics: SourceDiagnostic[]; yaml: YamlSource } {
  const { source: yaml, problems } = parseYaml(source.text, source.file);
  const syntax: SourceDiagnostic[] = problems.map((p) => ({ ...p, file: source.file, path: "" }));
  if (hasErrors(syntax)) return { state: null, diagnostics: syntax, yaml };

  const read = yamlData(yaml, OrgFileSchema);
  if ("problem" in read) {
    return { state: null, diagnostics: [{ ...read.problem, file: source.file, path: "" }], yaml };
  }
  const data = read.data;
  if (data === null || data === undefined) {
    const empty = { severity: "error" as const, path: "", message: "empty file: expected `org:`" };
    return { state: null, diagnostics: [...syntax, place(yaml, empty)], yaml };
  }
  const schema = checkOrgFileSchema(data);
  let semantic: Diagnostic[] = [];
  try {
    const state = fillOmitted(data as OrgState);
    semantic = [...resolveSecrets(state, env), ...validateOrg(state)];
  } catch (error) {
    // Only reachable when the data broke the schema in a way the rules cannot walk (a list
    // where a mapping belongs): the schema errors already say what is wrong.
    if (schema.length === 0) throw error;
  }
  if (schema.length > 0) {
    // Rules about an item the schema rejected would only guess at what it meant.
    const rejected = schema.map((s) => itemOf(s.path));
    semantic = semantic.filter((d) => !rejected.some((item) => isWithin(d.path, item)));
  }
  const diagnostics = sortDiagnostics([
    ...syntax,
    ...[...schema, ...semantic].map((d) => place(yaml, d)),
  ]);
  return { state: schema.length > 0 ? null : (data as OrgState), diagnostics, yaml };
}

/** Loads several org files, adding the checks that span files (ids, prefixes, DIDs). */
export function loadOrgSources(sources: readonly OrgSource[], env: SecretEnvironment): LoadResult {
  return combineLoads(
    sources,
    sources.map((source) => loadOrgSource(source, env)),
  );
}

/**
 * The load result of `sources` from each file's own `loadOrgSource` result (in the same order),
 * adding the checks that span files. Split out so that the per-file work can run elsewhere (in
 * worker threads) and give exactly what `loadOrgSources` gives.
 */
export function combineLoads(
  sources: readonly OrgSource[],
  perFile: readonly { state: OrgState | null; diagnostics: SourceDiagnostic[] }[],
): LoadResult {
  const orgs: LoadedOrg[] = [];
  const diagnostics: SourceDiagnostic[] = [];
  sources.forEach((source, index) => {
    const loaded = perFile[index]!;
    diagnostics.push(...loaded.diagnostics);
    if (loaded.state) orgs.push({ file: source.file, state: loaded.state });
  });
  // Parsed documents are not kept: at 1,000 orgs they held a gigabyte. The rare file with a
  // problem spanning files is parsed again to place it.
  const textByFile = new Map(sources.map((source) => [source.file, source.text]));
  const reparsed = new Map<string, YamlSource>();
  for (const problem of crossOrgProblems(orgs)) {
    const text = textByFile.get(problem.file);
    if (text === undefined) continue;
    let yaml = reparsed.get(problem.file);
    if (!yaml) {
      yaml = parseYaml(text, problem.file).source;
      reparsed.set(problem.file, yaml);
    }
    diagnostics.push(place(yaml, problem));
  }
  return { orgs, diagnostics: sortDiagnostics(diagnostics) };
}

/** The narrow file access the loader needs; node:fs/promises by default. */
export interface OrgFileSystem {
  readFile(path: string): Promise<string>;
  /** Names in a directory, or null when `path` is a file. Throws when it does not exist. */
  listDirectory(path: string): Promise<string[] | null>;
}

export const nodeFileSystem: OrgFileSystem = {
  readFile: (path) => readFile(path, "utf8"),
  listDirectory: async (path) => ((await stat(path)).isDirectory() ? readdir(path) : null),
};

/** Files (`*.yaml`, `*.yml`) named by these paths: files as given, directories one level deep. */
export async function orgFilePaths(
  paths: readonly string[],
  fs: OrgFileSystem = nodeFileSystem,
): Promise<string[]> {
  const files: string[] = [];
  for (const path of paths) {
    let names: string[] | null;
    try {
      names = await fs.listDirectory(path);
    } catch {
      throw new OrgFileError(`${path}: no such file or directory`);
    }
    if (names === null) files.push(path);
    else {
      files.push(
        ...names
          .filter((name) => /\.ya?ml$/.test(name))
          .sort()
          .map((name) => join(path, name)),
      );
    }
  }
  return [...new Set(files)];
}

/** Reads and loads the org files named by these paths (files or directories). */
export async function loadOrgPaths(
  paths: readonly string[],
  env: SecretEnvironment,
  fs: OrgFileSystem = nodeFileSystem,
): Promise<LoadResult> {
  return loadOrgSources(await readOrgSources(paths, fs), env);
}

/** The text of every org file named by these paths (files or directories). */
export async function readOrgSources(
  paths: readonly string[],
  fs: OrgFileSystem = nodeFileSystem,
): Promise<OrgSource[]> {
  const sources: OrgSource[] = [];
  for (const file of await orgFilePaths(paths, fs)) {
    try {
      sources.push({ file, text: await fs.readFile(file) });
    } catch {
      throw new OrgFileError(`${file}: cannot be read`);
    }
  }
  return sources;
}

type FileDiagnostic = SchemaDiagnostic & { file: string };

// Orgs compiled together share one engine: ids, context prefixes and DIDs must not collide.
// One pass with maps of what earlier files claimed: comparing every pair of orgs (and every pair
// of their DIDs) took seconds at 1,000 orgs.
function crossOrgProblems(orgs: readonly LoadedOrg[]): FileDiagnostic[] {
  const problems: FileDiagnostic[] = [];
  const error = (file: string, path: string, message: string) =>
    problems.push({ severity: "error", file, path, message });
  const ids = new Map<string, string>();
  const prefixes = new Map<string, string>();
  const numbers = new Map<string, string>();
  const addresses: { entry: string; file: string }[] = [];
  for (const { file, state } of orgs) {
    const idOwner = ids.get(state.org.id);
    if (idOwner !== undefined) {
      error(file, "org.id", `org id ${state.org.id} is also used in ${idOwner}`);
    }
    const prefixOwner = prefixes.get(state.org.context_prefix);
    if (prefixOwner !== undefined) {
      error(
        file,
        "org.context_prefix",
        `context prefix ${state.org.context_prefix} is also used in ${prefixOwner}`,
      );
    }
    const claimed: string[] = [];
    state.dids.forEach((did, k) => {
      if (!isUsableDid(did)) return;
      const key = internationalDigits(did.number);
      const numberOwner = numbers.get(key);
      if (numberOwner !== undefined) {
        error(file, `dids[${k}].number`, `DID ${did.number} is also assigned in ${numberOwner}`);
      }
      claimed.push(key);
    });
    // A carrier address or range another file's trunk matches: Asterisk would give its traffic
    // to one of the two orgs (src/model/trunk-identify.ts). Pairwise, but over the few match
    // entries of each org, not over its numbers.
    const matched: { entry: string; file: string }[] = [];
    state.trunks.forEach((trunk, t) => {
      for (const entry of identifyMatches(trunk)) {
        const owner = addresses.find((claim) => matchesOverlap(entry, claim.entry));
        if (owner !== undefined) {
          const m = trunk.match.indexOf(entry);
          error(
            file,
            m < 0 ? `trunks[${t}].host` : `trunks[${t}].match[${m}]`,
            `${entry} is already matched by a trunk in ${owner.file}`,
          );
        }
        matched.push({ entry, file });
      }
    });
    // Claims are recorded after the org's own checks: a number twice in one file is the
    // single-org validator's concern, not a clash between files.
    if (idOwner === undefined) ids.set(state.org.id, file);
    if (prefixOwner === undefined) prefixes.set(state.org.context_prefix, file);
    for (const key of claimed) if (!numbers.has(key)) numbers.set(key, file);
    addresses.push(...matched);
  }
  return problems;
}

/** The list item a path lies in (`ivrs[0].options[1]` for `ivrs[0].options[1].digit`). */
function itemOf(path: string): string {
  const end = path.lastIndexOf("]");
  return end < 0 ? path.split(".")[0]! : path.slice(0, end + 1);
}

function place(source: YamlSource, d: SchemaDiagnostic): SourceDiagnostic {
  const position = positionOf(source, d.path, { key: d.at === "key" });
  return {
    severity: d.severity,
    path: d.path,
    message: d.message,
    ...(d.hint ? { hint: d.hint } : {}),
    file: source.file,
    ...position,
  };
}

function sortDiagnostics(diagnostics: SourceDiagnostic[]): SourceDiagnostic[] {
  return diagnostics.sort(
    (a, b) => (a.file < b.file ? -1 : a.file > b.file ? 1 : 0) || a.line - b.line || a.col - b.col,
  );
}
