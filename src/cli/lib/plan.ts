// `plan`: what a deploy would change, as a unified diff of the managed files plus the engine
// reloads the change needs (the same reloadsFor the deployer runs).
import { createTwoFilesPatch } from "diff";
import type { OrgImpact } from "../../compiler/impact.js";
import { type FileChange, type ReloadCommand, reloadsFor } from "../../deploy/reloads.js";
import { type FlowRun, formatFlowRun } from "./flows.js";

export type FileAction = "add" | "change" | "remove";

export interface PlanResult {
  /** Whether applying would change anything. */
  changed: boolean;
  files: { path: string; action: FileAction }[];
  /** The engine commands a deploy of this change runs, in order. */
  reloads: string[];
  /** Unified diff, `a/<path>` before and `b/<path>` after (`/dev/null` for added/removed). */
  diff: string;
  /** What the change means for callers, per org (with --base: org files on both sides). */
  impact?: OrgImpact[];
  /** The flow assertions beside the org files, checked against the new configuration. */
  flows?: FlowRun;
}

/** The plan that turns the `before` tree into the `after` tree (path -> text, both). */
export function planTrees(
  before: ReadonlyMap<string, string>,
  after: ReadonlyMap<string, string>,
): PlanResult {
  const paths = [...new Set([...before.keys(), ...after.keys()])].sort((a, b) =>
    a < b ? -1 : a > b ? 1 : 0,
  );
  const changes: FileChange[] = [];
  const files: PlanResult["files"] = [];
  let diff = "";
  for (const path of paths) {
    const old = before.get(path) ?? null;
    const next = after.get(path) ?? null;
    if (old === next) continue;
    changes.push({ path, before: old, after: next });
    files.push({ path, action: old === null ? "add" : next === null ? "remove" : "change" });
    diff += createTwoFilesPatch(
      old === null ? "/dev/null" : `a/${path}`,
      next === null ? "/dev/null" : `b/${path}`,
      old ?? "",
      next ?? "",
      undefined,
      undefined,
      { context: 3 },
    );
  }
  const reloads: ReloadCommand[] = reloadsFor(changes);
  return { changed: files.length > 0, files, reloads: reloads.map((r) => r.command), diff };
}

/** The plan as a person reads it: the diff, a count line and the reload commands. */
export function formatPlan(plan: PlanResult): string {
  const flows = plan.flows ? `\n\n${formatFlowRun(plan.flows)}` : "";
  const impact = plan.impact && plan.impact.length > 0 ? `${formatImpact(plan.impact)}\n\n` : "";
  return `${impact}${formatChanges(plan)}${flows}`;
}

/** Impact lines: per org, its summary then one indented line per change. */
export function formatImpact(impact: readonly OrgImpact[]): string {
  return impact
    .map((org) => [org.summary, ...org.lines.map((line) => `  ${line}`)].join("\n"))
    .join("\n");
}

function formatChanges(plan: PlanResult): string {
  if (!plan.changed) return "No changes. The engine configuration is up to date.";
  const count = (action: FileAction) => plan.files.filter((f) => f.action === action).length;
  const lines = [
    plan.diff.trimEnd(),
    "",
    `Plan: ${count("add")} to add, ${count("change")} to change, ${count("remove")} to remove.`,
    "Reloads:",
    ...(plan.reloads.length > 0 ? plan.reloads.map((r) => `  ${r}`) : ["  (none)"]),
  ];
  return lines.join("\n");
}
