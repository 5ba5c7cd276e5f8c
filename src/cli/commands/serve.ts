import { existsSync } from "node:fs";
import { Command, Flags } from "@oclif/core";
// One bundled module in the build (src/api/serve-modules.ts): the start-up's module loading.
import {
  EngineConfigError,
  loadConfig,
  pino,
  StoreBehindError,
  startServer,
} from "../../api/serve-modules.js";
import { serverLogger } from "../lib/server-logger.js";

export default class Serve extends Command {
  static override summary = "Serve the REST API, the OpenAPI document and the documentation pages.";
  static override description =
    "Opens (and migrates, unless --no-migrate) the store (PBX_DATABASE_URL, else the SQLite " +
    "file of the data directory), then listens until SIGTERM or SIGINT (answering " +
    "/health/ready 503 first), finishing open requests and pending deploys before it exits. " +
    "On start it deploys " +
    "whatever differs into the engine directory (<data-dir>/asterisk or PBX_ASTERISK_DIR) so it " +
    "holds every active org, the gateway and the include files; saves deploy in the background. " +
    "The engine is PBX_ENGINE (none or ami, see docs/engine.md). Flags override the PBX_* " +
    "environment variables (see docs/api.md).";
  static override examples = [
    "<%= config.bin %> <%= command.id %>",
    "<%= config.bin %> <%= command.id %> --port 8080 --host 0.0.0.0 --data-dir /var/lib/pbxctl --pretty",
  ];
  static override flags = {
    port: Flags.integer({ summary: "TCP port (env PBX_PORT, default 3000).", min: 0, max: 65535 }),
    host: Flags.string({ summary: "Address to bind (env PBX_HOST, default 127.0.0.1)." }),
    "data-dir": Flags.directory({
      summary: "Store, secrets and engine files (env PBX_DATA_DIR, default ./var).",
    }),
    migrate: Flags.boolean({
      summary:
        "Migrate the store on start (default). --no-migrate refuses to start on a store whose schema is behind: run `pbxctl db migrate` first (rolling upgrades).",
      default: true,
      allowNo: true,
    }),
    pretty: Flags.boolean({
      summary: "Human-readable logs instead of JSON lines.",
      default: false,
    }),
  };

  async run(): Promise<void> {
    const { flags } = await this.parse(Serve);
    const config = loadConfig(process.env, {
      ...(flags.port !== undefined ? { port: flags.port } : {}),
      ...(flags.host !== undefined ? { host: flags.host } : {}),
      ...(flags["data-dir"] !== undefined ? { dataDir: flags["data-dir"] } : {}),
    });
    const logger = await serverLogger(pino, { pretty: flags.pretty, level: config.logLevel });
    if (config.generatedAdminPassword) {
      // Shown this once; only its hash is kept (in the data dir).
      this.logToStderr(
        `Generated admin password for '${config.adminUsername}': ${config.generatedAdminPassword}\n` +
          "It will not be shown again. Set PBX_ADMIN_PASSWORD to choose your own.",
      );
    }
    let running: Awaited<ReturnType<typeof startServer>>;
    try {
      running = await startServer({ config, logger, env: process.env, migrate: flags.migrate });
    } catch (error) {
      // Bad PBX_ENGINE / PBX_AMI_* / PBX_ENVIRONMENT: one line, no stack trace.
      if (error instanceof EngineConfigError || error instanceof StoreBehindError) {
        this.error(error.message, { exit: 1 });
      }
      throw error;
    }
    logger.info(
      {
        url: running.url,
        data_dir: config.dataDir,
        engine: running.engine?.target.kind,
        engine_dir: running.engine?.paths.asteriskDir,
      },
      "pbxctl serving",
    );
    if (running.engine?.target.kind === "ami" && !existsSync(config.recordingsDir)) {
      // Asterisk writes recordings under its own <astspooldir>/monitor; a directory that is not
      // there means every GET /calls/{id}/recording will answer 404.
      logger.warn(
        { recordings_dir: config.recordingsDir },
        "the recordings directory does not exist: recordings will not be found. With " +
          "PBX_ENGINE=ami, PBX_RECORDINGS_DIR must be Asterisk's <astspooldir>/monitor " +
          "(`pbxctl engine init` prints it)",
      );
    }
    await new Promise<void>((resolve) => {
      const stop = (signal: string) => {
        logger.info({ signal }, "shutting down");
        running.close().then(resolve, (error: unknown) => {
          logger.error({ err: error }, "shutdown failed");
          resolve();
        });
      };
      process.once("SIGTERM", () => stop("SIGTERM"));
      process.once("SIGINT", () => stop("SIGINT"));
    });
  }
}
