// Everything a use case may need, built once by the app and passed down.
import type { Config } from "../config.js";
import type { Db } from "../store/database.js";
import type { Clock, DeployScheduler } from "./ports.js";
import type { TokenService } from "./tokens.js";

export interface DomainDeps {
  db: Db;
  config: Config;
  tokens: TokenService;
  clock: Clock;
  deployScheduler: DeployScheduler;
}
