// `pbxctl status` as a table: columns sized to the longest value (org unit ids are long), one
// row per unit, then the files of a drifted unit and a failed deploy's error indented below it.
import type { UnitStatus } from "../../deploy/status.js";
import type { Paint } from "./colour.js";
import { StatusExitCode } from "./exit-codes.js";

/** The state words of a unit: OK, PENDING (saved, not live), DRIFTED (files changed on disk). */
export function unitState(unit: UnitStatus): string[] {
  const state: string[] = [];
  if (unit.pending) state.push("PENDING");
  if (unit.drifted.length > 0) state.push("DRIFTED");
  if (unit.lastDeploy?.result === "failed") state.push("FAILED");
  return state.length > 0 ? state : ["OK"];
}

/** The table's lines (header first). */
export function statusTable(units: readonly UnitStatus[], paint: Paint): string[] {
  const rows = units.map((unit) => {
    const last = unit.lastDeploy;
    const restored = last?.restored ? ` to ${last.restored.revision.slice(0, 12)}` : "";
    return {
      unit,
      cells: [
        unit.unit,
        unit.org ?? "-",
        unit.appliedRevision ? unit.appliedRevision.slice(0, 12) : "(none)",
        unit.desiredRevision ? unit.desiredRevision.slice(0, 12) : "-",
        last ? `${last.result} ${last.at} (${last.trigger}${restored})` : "-",
        unit.health?.status ?? "-",
        unitState(unit).join(" "),
      ],
    };
  });
  const header = ["UNIT", "ORG", "APPLIED", "DESIRED", "LAST DEPLOY", "ENGINE", "STATE"];
  const widths = header.map((title, i) =>
    Math.max(title.length, ...rows.map((row) => row.cells[i]!.length)),
  );
  // Pad before painting: escape codes must not count towards a column's width.
  const line = (cells: string[], lastStyle?: Parameters<Paint>[0]) => {
    const padded = cells.slice(0, -1).map((cell, i) => cell.padEnd(widths[i]!));
    const last = cells[cells.length - 1]!;
    return [...padded, lastStyle ? paint(lastStyle, last) : last].join("  ");
  };
  const lines = [paint("bold", line(header))];
  let node: string | undefined;
  for (const { unit, cells } of rows) {
    // Units of several engine nodes (issue 25): a heading before each node's units.
    if (unit.node !== undefined && unit.node !== node) {
      node = unit.node;
      lines.push(paint("bold", `node ${node}`));
    }
    lines.push(line(cells, cells[cells.length - 1] === "OK" ? "green" : "yellow"));
    for (const file of unit.drifted) lines.push(`  drifted: ${file.path} (${file.change})`);
    if (unit.pending) {
      const wanted = unit.desiredRevision ?? unit.lastDeploy?.revision ?? "";
      lines.push(`  pending: ${wanted.slice(0, 12)} is not live`);
    }
    if (unit.lastDeploy?.error) lines.push(paint("red", `  error: ${unit.lastDeploy.error}`));
  }
  return lines;
}

/**
 * The exit code of `pbxctl status` for these units: the worst state any unit is in, so a script
 * can tell "all live" from "not yet live", "changed behind pbxctl's back" and "a deploy failed".
 */
export function statusExitCode(units: readonly UnitStatus[]): number {
  const states = new Set(units.flatMap(unitState));
  if (states.has("FAILED")) return StatusExitCode.failed;
  if (states.has("DRIFTED")) return StatusExitCode.drifted;
  if (states.has("PENDING")) return StatusExitCode.pending;
  return StatusExitCode.ok;
}
