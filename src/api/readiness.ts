// Whether this process should get traffic (GET /health/ready, the pbx_ready gauge): the store
// answers, every migration is applied, and it is not shutting down. `serve`'s SIGTERM path
// flips `shuttingDown` first, so a load balancer stops sending before the server stops listening.
import { type Db, migrationsPending, storeIsHealthy } from "../store/database.js";

export interface ReadinessReport {
  ready: boolean;
  store: "ok" | "error";
  migrations: "ok" | "pending" | "unknown";
  shutting_down: boolean;
}

export class Readiness {
  private shuttingDown = false;

  constructor(private readonly db: Db) {}

  /** From now on the process answers not ready. */
  markShuttingDown(): void {
    this.shuttingDown = true;
  }

  async check(): Promise<ReadinessReport> {
    const store = (await storeIsHealthy(this.db)) ? "ok" : "error";
    let migrations: ReadinessReport["migrations"] = "unknown";
    if (store === "ok") {
      try {
        migrations = (await migrationsPending(this.db)).length === 0 ? "ok" : "pending";
      } catch {
        migrations = "unknown";
      }
    }
    return {
      ready: store === "ok" && migrations === "ok" && !this.shuttingDown,
      store,
      migrations,
      shutting_down: this.shuttingDown,
    };
  }
}
