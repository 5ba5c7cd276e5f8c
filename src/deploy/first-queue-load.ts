// The first load of the queues into a running engine, without app_queue's device-state storm.
//
// Every queue member app_queue adds publishes a device state (`Queue:<q>_pause_<member>`,
// `member_add_to_queue`) and every queue one more (`Queue:<q>_avail`, `init_queue`), and
// app_queue's own subscription (`device_state_cb`) handles each by walking every member of every
// queue: loading 1,000 orgs' queues with `queue reload all` queues ~30,000 events that each walk
// ~25,000 members, hours of engine work on a loaded machine (docs/engine.md, "Device state at
// scale"). At boot the same load is free, because `load_module` reads queues.conf before it
// subscribes; `module refresh app_queue.so` (unload, then load) takes that path on a running
// engine. It also drops app_queue's counters (calls taken, last call: what the `leastrecent`,
// `fewestcalls` and `rrmemory` strategies go by), so it is used only when the engine has never
// loaded a queues file from pbxctl: nothing to lose. Asterisk refuses the unload while a channel
// is in a queue application (soft unload, use count), and the engine target then falls back to
// the full reload (src/engine/ami-target.ts).
import type { AppliedRevision } from "./deploy-log.js";
import { fullReloadOf, moduleOf, type ReloadCommand } from "./reloads.js";

/** The command that loads every queue with app_queue loaded afresh (see above). */
export const QUEUES_FRESH_LOAD: ReloadCommand = {
  module: "queues",
  command: "module refresh app_queue.so",
};

/** Whether `command` reloads every queue (`queue reload all` without a name). */
export function isFullQueueReload(command: ReloadCommand): boolean {
  return command.module === "queues" && command.command === fullReloadOf("queues").command;
}

/**
 * `commands` with the full queue reload replaced by QUEUES_FRESH_LOAD when no applied revision
 * in `applied` (the deploy log of this engine directory) holds a queues file: the engine has no
 * queue of pbxctl's loaded, so loading them afresh loses nothing.
 */
export function firstQueueLoad(
  commands: readonly ReloadCommand[],
  applied: readonly AppliedRevision[],
): ReloadCommand[] {
  const queuesLoaded = applied.some((revision) =>
    Object.keys(revision.files).some((path) => moduleOf(path) === "queues"),
  );
  return commands.map((command) =>
    !queuesLoaded && isFullQueueReload(command) ? QUEUES_FRESH_LOAD : command,
  );
}
