// Lint findings of loaded org files, placed at file:line:col like every other diagnostic.
import { readFile } from "node:fs/promises";
import { lintOrg } from "../../compiler/lint.js";
import type { LoadedOrg, SourceDiagnostic } from "../../model/files.js";
import { parseYaml, positionOf } from "../../model/yaml.js";

/** The lint findings of `orgs` (warnings, or errors with `strict`), each placed in its file. */
export async function lintLoadedOrgs(
  orgs: readonly LoadedOrg[],
  options: { strict: boolean; skipFiles?: ReadonlySet<string> },
): Promise<SourceDiagnostic[]> {
  const placed: SourceDiagnostic[] = [];
  for (const { file, state } of orgs) {
    // A file with errors gets them fixed first; lint guesses about it would be noise.
    if (options.skipFiles?.has(file)) continue;
    const findings = lintOrg(state);
    if (findings.length === 0) continue;
    // Loads keep no parsed documents (memory at scale); the rare file with findings is parsed again.
    const { source } = parseYaml(await readFile(file, "utf8"), file);
    for (const finding of findings) {
      placed.push({
        ...finding,
        severity: options.strict ? "error" : "warning",
        file,
        ...positionOf(source, finding.path),
      });
    }
  }
  return placed;
}
