// Which engine reload each changed file needs (ASTERISK.md, "Reloads"). Shared by the deployer,
// which runs them, and `pbxctl plan`, which shows them. Never `core reload`.

/**
 * Order in which changed modules are reloaded: endpoints before the dialplan that dials them,
 * music-on-hold classes before the endpoints, dialplan and queues that name them.
 */
export const MODULE_ORDER = ["moh", "pjsip", "dialplan", "queues", "voicemail"] as const;

export type EngineModule = (typeof MODULE_ORDER)[number];

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
  if (name === "voicemail.conf") return "voicemail";
  if (name === "musiconhold.conf") return "moh";
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
 * (PJSIP first so that endpoints exist before the dialplan that dials them). A queue is
 * reloaded by name when it is the only one that changed (see `queueReload`).
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
  return MODULE_ORDER.filter((module) => touched.has(module)).map((module) =>
    module === "queues" && !allQueues ? queueReload(queues) : fullReloadOf(module),
  );
}

/**
 * The one reload that loads every queue in `names`: `queue reload all <name>` for a single queue
 * (it costs far less than reloading every queue of every tenant), the full reload otherwise.
 * Never several names: app_queue loads queues.conf with CONFIG_FLAG_FILEUNCHANGED for each name
 * it is given, so every name after the first finds the file "unchanged" and is silently not
 * reloaded (checked on Asterisk 22.10.1: `queue reload all q1 q2` after adding both left q2
 * missing); and a list of names grows past the 1,022-byte line AMI accepts (`AMI_MAX_LINE_BYTES`).
 */
export function queueReload(names: ReadonlySet<string>): ReloadCommand {
  if (names.size === 1) return { module: "queues", command: `queue reload all ${[...names][0]}` };
  return fullReloadOf("queues");
}

/** The queue a named queue reload names, or null for the full reload (or another command). */
export function queueNamedBy(command: ReloadCommand): string | null {
  if (command.module !== "queues") return null;
  const name = command.command.slice("queue reload all".length).trim();
  return name === "" ? null : name;
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

/** The reload command that reloads a module whole (every queue for `queues`). */
export function fullReloadOf(module: EngineModule): ReloadCommand {
  return { module, command: FULL_RELOAD[module] };
}

const FULL_RELOAD: Record<EngineModule, string> = {
  pjsip: "module reload res_pjsip.so",
  dialplan: "dialplan reload",
  queues: "queue reload all",
  voicemail: "module reload app_voicemail.so",
  // `moh reload` answers with nothing at all; `module reload` says whether the reload worked.
  moh: "module reload res_musiconhold.so",
};

/**
 * Reloads for file changes plus whole-module reloads for `forced` modules (files whose loaded
 * content is unknown, e.g. after a failed reload), still at most one per module in the order of
 * `reloadsFor`.
 */
export function reloadsWithForced(
  changes: readonly FileChange[],
  forced: ReadonlySet<EngineModule>,
): ReloadCommand[] {
  const byModule = new Map<EngineModule, ReloadCommand>();
  for (const command of reloadsFor(changes)) byModule.set(command.module, command);
  for (const module of forced) byModule.set(module, fullReloadOf(module));
  return MODULE_ORDER.flatMap((module) => {
    const command = byModule.get(module);
    return command ? [command] : [];
  });
}

/**
 * One list of reloads covering several lists (several units deployed together): one command per
 * module; queues by name only when all lists name the same single queue (`queueReload`).
 */
export function mergeReloads(lists: readonly (readonly ReloadCommand[])[]): ReloadCommand[] {
  const modules = new Set<EngineModule>();
  const queues = new Set<string>();
  let allQueues = false;
  for (const command of lists.flat()) {
    modules.add(command.module);
    if (command.module !== "queues") continue;
    const name = queueNamedBy(command);
    if (name === null) allQueues = true;
    else queues.add(name);
  }
  return MODULE_ORDER.filter((module) => modules.has(module)).map((module) =>
    module === "queues" && !allQueues ? queueReload(queues) : fullReloadOf(module),
  );
}
