// Building the engine target from its settings (config.ts's engineSettingsFrom: PBX_ENGINE,
// PBX_AMI_*).
import type { EngineSettings } from "../config.js";
import { type AmiTargetOptions, createAmiTarget } from "./ami-target.js";
import { createNoneTarget } from "./none-target.js";
import type { EngineTarget } from "./target.js";

export type { EnginePaths } from "./paths.js";
export * from "./target.js";

/** Builds the target `settings` name; `ami` connects at once. */
export function createEngineTarget(
  settings: EngineSettings,
  extra: Partial<AmiTargetOptions> = {},
): EngineTarget {
  if (settings.kind === "ami") return createAmiTarget({ ...settings.ami, ...extra });
  return createNoneTarget();
}

/** The engine state for `/health` (the domain's EngineHealthProbe): files-only, connected or disconnected. */
export function engineHealthProbe(target: EngineTarget): () => string {
  return () => {
    if (target.kind === "none") return "files-only";
    const connection = (target as { connection?: { isReady: boolean } }).connection;
    return connection?.isReady ? "connected" : "disconnected";
  };
}
