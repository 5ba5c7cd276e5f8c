// The engine as the deployer sees it. Deliberately small: a target makes the engine pick up
// configuration (today: by running reload commands over the files the deployer wrote) and says
// whether the engine is healthy. Nothing here assumes one engine node or file-based PJSIP: a
// target spreading orgs over several nodes routes each reload by the units it covers, and one
// serving PJSIP objects from a database may answer a PJSIP reload with `skipped` (DESIGN.md,
// "Engine at scale").
import type { ReloadCommand } from "../deploy/reloads.js";

export type EngineKind = "none" | "ami";
export const ENGINE_KINDS: readonly EngineKind[] = ["none", "ami"];

/** One reload to run, with the deploy units (`org:<prefix>`, `gateway`, `top`) it covers. */
export interface ReloadRequest {
  command: ReloadCommand;
  units: readonly string[];
}

export interface ReloadOutcome {
  command: string;
  /** `skipped`: the target has no engine to reload (files only). */
  status: "ok" | "skipped" | "failed";
  /** What the engine answered (CLI output lines joined with `\n`). */
  output?: string;
  error?: string;
  /** How many times the command was sent (retries after "reload already in progress"). */
  attempts: number;
  durationMs: number;
}

export interface EngineHealth {
  /** `unknown` when the target has no engine to ask (files only). */
  status: "healthy" | "unhealthy" | "unknown";
  checkedAt: string;
  /** Round trip of AMI `Ping`, in milliseconds. */
  pingMs?: number;
  /** First line of `core show uptime`, e.g. `System uptime: 2 hours, 3 minutes, 1 second`. */
  uptime?: string;
  lastReload?: string;
  error?: string;
}

/**
 * A question to the engine after a reload: is this object loaded (or gone)? `extension` names
 * are `exten@context`. `path` is the generated file the object comes from, for messages.
 */
export interface EngineProbe {
  kind: "context" | "extension" | "endpoint" | "queue" | "music class";
  name: string;
  present: boolean;
  path: string;
}

export interface EngineTarget {
  readonly kind: EngineKind;
  /**
   * Runs one reload command. Resolves with the engine's answer; throws `EngineBusyError` when the
   * engine refuses because a reload is already in progress (the caller retries), and
   * `EngineUnavailableError` when the engine cannot be reached.
   */
  reload(request: ReloadRequest): Promise<ReloadOutcome>;
  /**
   * Asks the engine about each probe and resolves with those it contradicts (an object the
   * reload should have added that is missing, or one it should have removed that is there).
   * Absent on targets with no engine to ask. Throws EngineUnavailableError when unreachable.
   */
  verify?(probes: readonly EngineProbe[]): Promise<EngineProbe[]>;
  /**
   * Resolves once the engine answers; rejects at once (with an EngineUnavailableError naming the
   * address and what to check) when it cannot be reached. Absent on targets with nothing to reach.
   * For commands that act once: a server keeps reconnecting instead.
   */
  reach?(): Promise<void>;
  /**
   * Realtime PJSIP (issue 24): drops one object from one of the engine's sorcery memory caches
   * (`res_pjsip/endpoint`, `res_pjsip/auth`, `res_pjsip/aor`), so its next lookup reads the
   * database. Resolves `expired`, or `not cached` when the cache did not hold it (nothing stale
   * to drop). Throws EngineCommandError for a cache the engine does not have and
   * EngineUnavailableError when unreachable. Absent on targets with no engine to tell.
   */
  expireCachedObject?(cache: string, id: string): Promise<"expired" | "not cached">;
  /** Asks the engine whether it is up and answering. Never throws. */
  health(): Promise<EngineHealth>;
  /** Releases connections; the target is unusable afterwards. */
  close(): Promise<void>;
}

/** The engine refused a reload because another one is running; retry later. */
export class EngineBusyError extends Error {
  override readonly name = "EngineBusyError";
}

/** The engine could not be reached or did not answer in time. */
export class EngineUnavailableError extends Error {
  override readonly name = "EngineUnavailableError";
}

/** The engine answered, but with an error (unknown command, reload failure, permission). */
export class EngineCommandError extends Error {
  override readonly name = "EngineCommandError";
}

/** Bad engine configuration (unknown PBX_ENGINE, missing AMI credentials). */
export class EngineConfigError extends Error {
  override readonly name = "EngineConfigError";
}
