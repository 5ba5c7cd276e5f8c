// What route handlers receive besides the request: the domain's dependencies plus the pieces
// only the API uses (identity-provider verifier, engine probe, logger).
import type { Logger } from "pino";
import type { CallControlPort } from "../domain/call-control.js";
import type { DomainDeps } from "../domain/deps.js";
import type { LiveCallsView } from "../domain/live-calls.js";
import type { EngineHealthProbe } from "../domain/ports.js";
import type { IdentityVerifier } from "../domain/user-login.js";

export interface AppDeps extends DomainDeps {
  identityVerifier: IdentityVerifier | null;
  engineHealth: EngineHealthProbe;
  /** The engine's live calls (empty, `tracking: false`, when no engine feeds them). */
  liveCalls: LiveCallsView;
  /** Actions on live calls (hangup) through the engine; null when no engine is followed. */
  callControl: CallControlPort | null;
  logger: Logger;
}
