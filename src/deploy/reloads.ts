// Which engine reload each changed file needs (ASTERISK.md, "Reloads"). Shared by the deployer,
// which runs them, and `pbxctl plan`, which shows them. Never `core reload`.

export type EngineModule = "pjsip" | "dialplan" | "queues";

export interface ReloadCommand {
  module: EngineModule;
  /** The Asterisk CLI command, as sent in an AMI `Action: Command`. */
  command: string;
}

export interface FileChange {
  path: string;
  /** Content before the change; null when the file is new. */
  before: string | null;
  /** Content after the change; null when the file is removed. */
  after: string | null;
}

/** The module whose configuration a generated file belongs to, by file name. */
export function moduleOf(path: string): EngineModule | null {
  const name = path.slice(path.lastIndexOf("/") + 1);
  if (name === "extensions.conf") return "dialplan";
  if (name === "pjsip.conf") return "pjsip";
  if (name === "queues.conf") return "queues";
  return null;
}

/** Queue section names defined in a queues.conf text (`[name]` at the start of a line). */
export function queueNames(content: string | null): Set<string> {
  const names = new Set<string>();
  if (content === null) return names;
  for (const match of content.matchAll(/^\[([^\]\r\n]+)\]/gm)) {
    if (match[1] !== "general") names.add(match[1]!);
  }
  return names;
}

/**
 * The reload commands for a set of file changes, at most one per module, in a fixed order
 * (PJSIP first so that endpoints exist before the dialplan that dials them). Queues are
 * reloaded by name when only queue files of orgs changed: `queue reload all <names>` costs far
 * less than reloading every queue of every tenant.
 */
export function reloadsFor(changes: readonly FileChange[]): ReloadCommand[] {
  const touched = new Set<EngineModule>();
  const queues = new Set<string>();
  let allQueues = false;
  for (const change of changes) {
    if (change.before === change.after) continue;
    const module = moduleOf(change.path);
    if (module === null) continue;
    touched.add(module);
    if (module === "queues") {
      // A top-level include file changing means a set of orgs changed: reload them all.
      if (!change.path.includes("/")) allQueues = true;
      const before = queueNames(change.before);
      const after = queueNames(change.after);
      // A queue reload by name cannot retire a queue that is gone from the file; a full
      // reload does.
      if ([...before].some((name) => !after.has(name))) allQueues = true;
      for (const name of new Set([...before, ...after])) {
        if (
          !before.has(name) ||
          !after.has(name) ||
          sectionOf(change.before, name) !== sectionOf(change.after, name)
        ) {
          queues.add(name);
        }
      }
    }
  }
  const commands: ReloadCommand[] = [];
  if (touched.has("pjsip"))
    commands.push({ module: "pjsip", command: "module reload res_pjsip.so" });
  if (touched.has("dialplan")) commands.push({ module: "dialplan", command: "dialplan reload" });
  if (touched.has("queues")) {
    const names = [...queues].sort();
    const command =
      allQueues || names.length === 0 ? "queue reload all" : `queue reload all ${names.join(" ")}`;
    commands.push({ module: "queues", command });
  }
  return commands;
}

/** The text of one `[name]` section up to the next section, for comparing queues one by one. */
function sectionOf(content: string | null, name: string): string | null {
  if (content === null) return null;
  const start = content.indexOf(`\n[${name}]`);
  const from = content.startsWith(`[${name}]`) ? 0 : start < 0 ? -1 : start + 1;
  if (from < 0) return null;
  const next = content.indexOf("\n[", from + 1);
  return content.slice(from, next < 0 ? undefined : next);
}
