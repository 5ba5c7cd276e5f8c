// The embedded default: files only. Reloads are recorded as skipped, so `pbxctl status` shows
// plainly that no engine was told.
import { type Clock, systemClock } from "../clock.js";
import type { EngineHealth, EngineTarget, ReloadOutcome, ReloadRequest } from "./target.js";

/** A target with no engine: every reload is `skipped`, health is `unknown`. */
export function createNoneTarget(clock: Clock = systemClock): EngineTarget {
  return {
    kind: "none",
    async reload(request: ReloadRequest): Promise<ReloadOutcome> {
      return { command: request.command.command, status: "skipped", attempts: 0, durationMs: 0 };
    },
    async health(): Promise<EngineHealth> {
      return { status: "unknown", checkedAt: clock().toISOString() };
    },
    async close() {},
  };
}
