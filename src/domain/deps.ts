// Everything a use case may need, built once by the app and passed down.

import type { Clock } from "../clock.js";
import type { Config } from "../config.js";
import type { Db } from "../store/database.js";
import type { SpeechEngine } from "../tts/engine.js";
import type { TokenService } from "./access/tokens.js";
import type { ConfigDeploys } from "./config/config-deploy.js";
import type { DeployScheduler } from "./ports.js";

/**
 * The settings use cases read, and nothing else: the JWT secret, the database URL or the listen
 * address never reach a use case (the token service holds the secret).
 */
export type DomainSettings = Pick<
  Config,
  | "internalKey"
  | "adminUsername"
  | "adminPasswordHash"
  | "serverKey"
  | "soundsDir"
  | "greetingMaxChars"
>;

export interface DomainDeps {
  db: Db;
  config: DomainSettings;
  tokens: TokenService;
  clock: Clock;
  deployScheduler: DeployScheduler;
  /** Deploys on request (`/config/*`); absent on a server without an engine directory. */
  configDeploys?: ConfigDeploys;
  /** Text to speech for previews and IVR greetings; absent: the PBX_TTS_ENGINE default. */
  speechEngine?: SpeechEngine;
}
