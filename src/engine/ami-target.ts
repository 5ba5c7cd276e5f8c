// A real Asterisk reached over AMI: reloads are CLI commands sent as `Action: Command`, health is
// `Action: Ping` plus `core show uptime`.
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
  type EngineTarget,
  type ReloadOutcome,
  type ReloadRequest,
} from "./target.js";

// Asterisk's answers (main/cli.c) when a module reload cannot run now or did not work.
const BUSY = /already in progress|please be patient|cannot reload a module yet/i;
const FAILED =
  /reported a reload failure|no such module|not properly initialized|does not support reloads|no such command/i;

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
}

/** An engine target over one reconnecting AMI connection (opened at once). */
export function createAmiTarget(options: AmiTargetOptions): AmiTarget {
  const connection = new AmiConnection(options);
  const reloadTimeoutMs = options.reloadTimeoutMs ?? 15 * 60_000;
  connection.start();
  return {
    kind: "ami",
    connection,
    async reload(request: ReloadRequest): Promise<ReloadOutcome> {
      const command = request.command.command;
      const started = performance.now();
      const response = await connection.action(
        { Action: "Command", Command: command },
        reloadTimeoutMs,
      );
      const output = commandOutput(response).join("\n");
      if (BUSY.test(output)) throw new EngineBusyError(`${command}: ${output}`);
      const durationMs = performance.now() - started;
      try {
        assertSuccess(response, command);
        if (FAILED.test(output)) throw new EngineCommandError(`${command} failed: ${output}`);
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
    async health(): Promise<EngineHealth> {
      const checkedAt = new Date().toISOString();
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
    close: () => connection.close(),
  };
}
