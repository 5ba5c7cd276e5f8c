// A deploy unit is the set of files deployed, diffed and rolled back together: one org
// (`orgs/<context_prefix>/**`), the gateway (`gateway/**`), or the top-level include files at the
// root of the engine config directory. Units never share a file, so one org's deploy can neither
// block nor corrupt another's.
import { TOP_LEVEL_FILES } from "../compiler/index.js";
import type { CompiledFile } from "../compiler/types.js";

export type DeployUnit = { kind: "org"; prefix: string } | { kind: "gateway" } | { kind: "top" };

/** The top-level include files, owned by the `top` unit: the compiler's own list. */
export { TOP_LEVEL_FILES };

const PREFIX = /^[A-Za-z][A-Za-z0-9_-]{0,46}_$/;
const SEGMENT = /^[A-Za-z0-9_][A-Za-z0-9_.-]*$/;

/** A path or unit name the deployer refuses (it would escape the engine directory, say). */
export class InvalidDeployPathError extends Error {
  override readonly name = "InvalidDeployPathError";
}

/** The unit for one org. Throws InvalidDeployPathError on a prefix that is not a context prefix. */
export function orgUnit(prefix: string): DeployUnit {
  if (!PREFIX.test(prefix)) throw new InvalidDeployPathError(`not a context prefix: "${prefix}"`);
  return { kind: "org", prefix };
}

/** A stable id: `org:<prefix>`, `gateway` or `top`. */
export function unitId(unit: DeployUnit): string {
  return unit.kind === "org" ? `org:${unit.prefix}` : unit.kind;
}

/** The unit an id names (inverse of unitId). */
export function parseUnitId(id: string): DeployUnit {
  if (id === "gateway" || id === "top") return { kind: id };
  if (id.startsWith("org:")) return orgUnit(id.slice(4));
  throw new InvalidDeployPathError(`not a deploy unit: "${id}"`);
}

/** The directory a unit's files live in, relative to the engine dir (`""` for top). */
export function unitRoot(unit: DeployUnit): string {
  if (unit.kind === "org") return `orgs/${unit.prefix}`;
  return unit.kind === "gateway" ? "gateway" : "";
}

/** Checks that a relative path stays inside the engine dir and uses plain names. */
export function assertSafePath(path: string): void {
  const segments = path.split("/");
  if (path.startsWith("/") || segments.some((s) => !SEGMENT.test(s) || s === "..")) {
    throw new InvalidDeployPathError(`unsafe file path "${path}"`);
  }
}

/** The unit that owns a compiled file's path; throws InvalidDeployPathError if none does. */
export function unitOfPath(path: string): DeployUnit {
  assertSafePath(path);
  const segments = path.split("/");
  if (segments.length === 1 && (TOP_LEVEL_FILES as readonly string[]).includes(path)) {
    return { kind: "top" };
  }
  if (segments[0] === "gateway" && segments.length >= 2) return { kind: "gateway" };
  if (segments[0] === "orgs" && segments.length >= 3) return orgUnit(segments[1]!);
  throw new InvalidDeployPathError(`no deploy unit owns "${path}"`);
}

/** Whether `path` belongs to `unit`. */
export function unitOwns(unit: DeployUnit, path: string): boolean {
  try {
    return unitId(unitOfPath(path)) === unitId(unit);
  } catch {
    return false;
  }
}

export interface UnitFiles {
  unit: DeployUnit;
  files: CompiledFile[];
}

/** Splits a compiled file set into its units (orgs by prefix, then gateway, then top). */
export function splitIntoUnits(files: readonly CompiledFile[]): UnitFiles[] {
  const byId = new Map<string, UnitFiles>();
  for (const file of files) {
    const unit = unitOfPath(file.path);
    const id = unitId(unit);
    let entry = byId.get(id);
    if (!entry) {
      entry = { unit, files: [] };
      byId.set(id, entry);
    }
    entry.files.push(file);
  }
  const order = (u: DeployUnit) => (u.kind === "org" ? 0 : u.kind === "gateway" ? 1 : 2);
  return [...byId.values()].sort(
    (a, b) => order(a.unit) - order(b.unit) || unitId(a.unit).localeCompare(unitId(b.unit), "en"),
  );
}
