// Choosing and building the engine target from the environment (PBX_ENGINE, PBX_AMI_*).
import type { AmiConnectionOptions } from "./ami-connection.js";
import { type AmiTargetOptions, createAmiTarget } from "./ami-target.js";
import { createNoneTarget } from "./none-target.js";
import { ENGINE_KINDS, EngineConfigError, type EngineKind, type EngineTarget } from "./target.js";

export { type EnginePaths, resolveEnginePaths } from "./paths.js";
export * from "./target.js";

type Env = Readonly<Record<string, string | undefined>>;

/** The engine kind named by `override` or `PBX_ENGINE` (default `none`); throws on an unknown one. */
export function engineKindFrom(env: Env, override?: string): EngineKind {
  const kind = override ?? env.PBX_ENGINE ?? "none";
  if (!(ENGINE_KINDS as readonly string[]).includes(kind)) {
    throw new EngineConfigError(
      `unknown engine "${kind}": PBX_ENGINE must be one of ${ENGINE_KINDS.join(", ")}`,
    );
  }
  return kind as EngineKind;
}

/** AMI connection settings from `PBX_AMI_HOST` (127.0.0.1), `PBX_AMI_PORT` (5038), user, secret. */
export function amiOptionsFrom(env: Env): AmiConnectionOptions {
  const port = Number(env.PBX_AMI_PORT ?? 5038);
  if (!Number.isInteger(port) || port < 1 || port > 65535) {
    throw new EngineConfigError(`PBX_AMI_PORT must be a port number, got "${env.PBX_AMI_PORT}"`);
  }
  const username = env.PBX_AMI_USERNAME;
  const secret = env.PBX_AMI_SECRET;
  if (!username || !secret) {
    throw new EngineConfigError("the ami engine needs PBX_AMI_USERNAME and PBX_AMI_SECRET");
  }
  return { host: env.PBX_AMI_HOST || "127.0.0.1", port, username, secret };
}

/** Builds the target named by `override` or `PBX_ENGINE`; `ami` connects at once. */
export function createEngineTarget(
  env: Env,
  override?: string,
  extra: Partial<AmiTargetOptions> = {},
): EngineTarget {
  const kind = engineKindFrom(env, override);
  if (kind === "ami") return createAmiTarget({ ...amiOptionsFrom(env), ...extra });
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
