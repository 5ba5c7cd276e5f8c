// What route handlers receive besides the request: the domain's dependencies plus the pieces
// only the API uses (identity-provider verifier, engine probe, logger).
import type { Logger } from "pino";
import type { Config } from "../config.js";
import type { IdentityVerifier } from "../domain/access/user-login.js";
import type { CallControlPort } from "../domain/calls/call-control.js";
import type { LiveCallsView } from "../domain/calls/live-calls.js";
import type { DomainDeps, DomainSettings } from "../domain/deps.js";
import type { EngineHealthProbe } from "../domain/ports.js";

/** The settings route handlers read beside the use cases' (never the JWT secret). */
export type ApiSettings = DomainSettings &
  Pick<Config, "recordingsDir" | "nodesDir" | "webhookAllowPrivate" | "defaultTrunkHost">;

/**
 * The settings handlers and use cases may read, copied out of the whole configuration. The admin
 * password hash stays a getter: reading it runs the scrypt `loadConfig` leaves to the first login.
 */
export function apiSettingsOf(config: Config): ApiSettings {
  return {
    internalKey: config.internalKey,
    adminUsername: config.adminUsername,
    get adminPasswordHash() {
      return config.adminPasswordHash;
    },
    serverKey: config.serverKey,
    soundsDir: config.soundsDir,
    greetingMaxChars: config.greetingMaxChars,
    recordingsDir: config.recordingsDir,
    nodesDir: config.nodesDir,
    webhookAllowPrivate: config.webhookAllowPrivate,
    defaultTrunkHost: config.defaultTrunkHost,
  };
}

export interface AppDeps extends Omit<DomainDeps, "config"> {
  config: ApiSettings;
  identityVerifier: IdentityVerifier | null;
  engineHealth: EngineHealthProbe;
  /** The engine's live calls (empty, `tracking: false`, when no engine feeds them). */
  liveCalls: LiveCallsView;
  /** Actions on live calls (hangup) through the engine; null when no engine is followed. */
  callControl: CallControlPort | null;
  logger: Logger;
}
