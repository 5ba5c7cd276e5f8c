// A real Asterisk reached over AMI: reloads are CLI commands sent as `Action: Command`, health is
// `Action: Ping` plus `core show uptime`, and a reload's effect is verified by asking for the
// objects it changed (`dialplan show`, `pjsip show endpoint`, `queue show`).
import { type Clock, systemClock } from "../clock.js";
import {
  AmiConnection,
  type AmiConnectionOptions,
  assertSuccess,
  commandOutput,
} from "./ami-connection.js";
import {
  EngineBusyError,
  EngineCommandError,
  type EngineHealth,
  type EngineProbe,
  type EngineTarget,
  type ReloadOutcome,
  type ReloadRequest,
} from "./target.js";

// Asterisk's answers (main/cli.c) when a module reload cannot run now or did not work.
const BUSY = /already in progress|please be patient|cannot reload a module yet/i;
const FAILED =
  /reported a reload failure|no such module|not properly initialized|does not support reloads|no such command/i;
// The module behind a reload is not loaded: Asterisk booted before its config was loadable (an
// `#include` of a file not yet written) and the module declined. Loading it now reads the config
// the deployer just wrote, which is what the reload was for; the service recovers by itself.
// `module load` is blacklisted over AMI `Command`; the `ModuleLoad` action does the same.
const NOT_LOADED = /no such command|not properly initialized|no such module/i;

// `module refresh <module>` unloads and loads a module (main/cli.c, handle_refresh): "Unable to
// unload resource <module>" when the soft unload is refused (a channel uses the module: a call
// is in a queue) or the module is not loaded; nothing was changed then.
const REFRESH = /^module refresh (\S+\.so)$/;
const REFRESH_REFUSED = /^Unable to unload resource/m;
const REFRESH_FAILED = /^Unable to load resource/m;
/** What a refused refresh of a module is replaced by: the module's own reload. */
const RELOAD_INSTEAD_OF_REFRESH: Record<string, string> = {
  "app_queue.so": "queue reload all",
};

/** The module file a reload command reloads. */
export function moduleFileOf(command: string): string | null {
  if (command === "dialplan reload") return "pbx_config.so";
  if (command.startsWith("queue reload")) return "app_queue.so";
  if (command === "moh reload") return "res_musiconhold.so";
  const match = /^module (?:reload|refresh) (\S+\.so)$/.exec(command);
  return match ? match[1]! : null;
}

/**
 * The extension a context probe asks for: one no context holds (pbxctl writes digits, `s`, `i`,
 * `t` and `_` patterns), so the answer is one line. `dialplan show <context>` prints the whole
 * context: 60,000 extensions for the gateway's `gateway-inbound` at 1,000 orgs, which outlived
 * the AMI action's timeout and failed the gateway's start-up deploy (issue 24f).
 */
export const CONTEXT_PROBE_EXTENSION = "pbxctl-probe";

/** The CLI command that tells whether `probe`'s object is loaded. */
export function probeCommand(probe: EngineProbe): string {
  switch (probe.kind) {
    case "context":
      return `dialplan show ${CONTEXT_PROBE_EXTENSION}@${probe.name}`;
    case "extension":
      return `dialplan show ${probe.name}`;
    case "endpoint":
      return `pjsip show endpoint ${probe.name}`;
    case "queue":
      return `queue show ${probe.name}`;
    case "music class":
      // No command shows one class: the listing of every class, searched by probeFound.
      return "moh show classes";
  }
}

/** Whether the engine's answer to probeCommand(probe) says the object exists. */
export function probeFound(probe: EngineProbe, output: string): boolean {
  switch (probe.kind) {
    case "context":
      // main/pbx.c: "There is no existence of '<context>' context" when the context is not
      // loaded; an extension it lacks is "There is no existence of <exten>@<context> extension".
      return !/There is no existence of '[^']*' context/.test(output);
    case "extension":
      return !/There is no existence of/.test(output);
    case "endpoint":
      return !/Unable to find object/.test(output);
    case "queue":
      return !/No such queue/.test(output);
    case "music class":
      return output.split("\n").some((line) => line.trim() === `Class: ${probe.name}`);
  }
}

export interface AmiTarget extends EngineTarget {
  readonly connection: AmiConnection;
}

export interface AmiTargetOptions extends AmiConnectionOptions {
  /**
   * How long a reload may take before it counts as failed. Long on purpose: a PJSIP reload takes
   * 83 s at 1,000 orgs and ~10 min at 2,000 (ASTERISK.md), and giving up early would let the next
   * reload start while Asterisk is still busy with this one. Default 15 minutes.
   */
  reloadTimeoutMs?: number;
  /** Wall time of health checks (`checkedAt`). */
  clock?: Clock;
}

/** An engine target over one reconnecting AMI connection (opened at once). */
export function createAmiTarget(options: AmiTargetOptions): AmiTarget {
  const connection = new AmiConnection(options);
  const reloadTimeoutMs = options.reloadTimeoutMs ?? 15 * 60_000;
  const clock = options.clock ?? systemClock;
  connection.start();
  return {
    kind: "ami",
    connection,
    async reload(request: ReloadRequest): Promise<ReloadOutcome> {
      const command = request.command.command;
      const started = performance.now();
      let response = await connection.action(
        { Action: "Command", Command: command },
        reloadTimeoutMs,
      );
      let output = commandOutput(response).join("\n");
      const refreshed = REFRESH.exec(command)?.[1];
      const instead = refreshed ? RELOAD_INSTEAD_OF_REFRESH[refreshed] : undefined;
      if (instead && REFRESH_REFUSED.test(output)) {
        // Not unloaded (a call is in a queue, or the module is not loaded): its plain reload,
        // which keeps what a call uses (or loads the module, below).
        response = await connection.action(
          { Action: "Command", Command: instead },
          reloadTimeoutMs,
        );
        output = `${output}\n${instead}: ${commandOutput(response).join("\n")}`;
      }
      if (BUSY.test(output)) throw new EngineBusyError(`${command}: ${output}`);
      const moduleFile = moduleFileOf(command);
      if (NOT_LOADED.test(output) && moduleFile) {
        const load = await connection.action(
          { Action: "ModuleLoad", Module: moduleFile, LoadType: "load" },
          reloadTimeoutMs,
        );
        const loadOutput = `ModuleLoad ${moduleFile}: ${String(load.message ?? load.response ?? "")}`;
        if (String(load.response ?? "").toLowerCase() === "success") {
          return {
            command,
            status: "ok",
            output: `${output}\n${loadOutput}`,
            attempts: 1,
            durationMs: performance.now() - started,
          };
        }
        output = `${output}\n${loadOutput}`;
      }
      const durationMs = performance.now() - started;
      try {
        assertSuccess(response, command);
        if (FAILED.test(output) || REFRESH_FAILED.test(output)) {
          throw new EngineCommandError(`${command} failed: ${output}`);
        }
      } catch (error) {
        return {
          command,
          status: "failed",
          output,
          error: (error as Error).message,
          attempts: 1,
          durationMs,
        };
      }
      return { command, status: "ok", output, attempts: 1, durationMs };
    },
    async verify(probes: readonly EngineProbe[]): Promise<EngineProbe[]> {
      const contradicted: EngineProbe[] = [];
      for (const probe of probes) {
        const answer = await connection.action({ Action: "Command", Command: probeCommand(probe) });
        if (probeFound(probe, commandOutput(answer).join("\n")) !== probe.present) {
          contradicted.push(probe);
        }
      }
      return contradicted;
    },
    async expireCachedObject(cache: string, id: string) {
      const answer = await connection.action({
        Action: "SorceryMemoryCacheExpireObject",
        Cache: cache,
        Object: id,
      });
      if (String(answer.response ?? "").toLowerCase() === "success") return "expired";
      const message = String(answer.message ?? "");
      // res_sorcery_memory_cache answers an object it does not hold with this error: nothing
      // stale is cached, which is all an expiry is for.
      if (/could not be expired/i.test(message)) return "not cached";
      throw new EngineCommandError(
        `SorceryMemoryCacheExpireObject ${cache} ${id}: ${message || "(no answer)"}`,
      );
    },
    async health(): Promise<EngineHealth> {
      const checkedAt = clock().toISOString();
      try {
        const started = performance.now();
        const pong = await connection.action({ Action: "Ping" });
        assertSuccess(pong, "Ping");
        const pingMs = Math.round((performance.now() - started) * 100) / 100;
        const uptime = await connection.action({ Action: "Command", Command: "core show uptime" });
        assertSuccess(uptime, "core show uptime");
        const lines = commandOutput(uptime);
        const health: EngineHealth = { status: "healthy", checkedAt, pingMs };
        const system = lines.find((line) => /^System uptime:/i.test(line));
        const reload = lines.find((line) => /^Last reload:/i.test(line));
        if (system) health.uptime = system;
        if (reload) health.lastReload = reload;
        if (!system) {
          health.status = "unhealthy";
          health.error = `unexpected answer to core show uptime: ${lines.join(" ") || "(empty)"}`;
        }
        return health;
      } catch (error) {
        return { status: "unhealthy", checkedAt, error: (error as Error).message };
      }
    },
    reach: () => connection.reach(),
    close: () => connection.close(),
  };
}
