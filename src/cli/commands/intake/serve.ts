import type { AddressInfo } from "node:net";
import { Command, Flags } from "@oclif/core";
import { pino } from "pino";
import { createIntakeApp, EVENTS_PATH } from "../../../api/intake-app.js";
import { systemClock } from "../../../clock.js";
import { intakeSettingsFrom, loadConfig } from "../../../config.js";
import { openStore } from "../../../store/database.js";
import { createTicketService } from "../../../tickets/service.js";
import { serverLogger } from "../../lib/server-logger.js";

export default class IntakeServe extends Command {
  static override summary =
    "Serve the auto-ticket intake alone (POST /events/auto-ticket/{org_id}).";
  static override description =
    "Runs the intake service of SPEC §4.7 without the API: it answers " +
    "POST /events/auto-ticket/{org_id} with 202 at once, classifies the call in the background " +
    "and writes tickets (and their messages) into the store of the data directory, which it " +
    "shares with `pbxctl serve`. AI-agent extensions are asked of the API at --api-url with " +
    "PBX_INTERNAL_KEY. Point the server's PBX_EVENTS_URL at http://<host>:<port>/events to use " +
    "it; `pbxctl serve` already mounts the same intake, so this is only for running it apart.";
  static override examples = [
    "<%= config.bin %> <%= command.id %> --port 3001 --api-url http://127.0.0.1:3000",
  ];
  static override flags = {
    port: Flags.integer({
      summary: "TCP port (env PBX_INTAKE_PORT, default 3001).",
      min: 0,
      max: 65535,
    }),
    host: Flags.string({ summary: "Address to bind (env PBX_HOST, default 127.0.0.1)." }),
    "data-dir": Flags.directory({
      summary: "The store shared with the server (env PBX_DATA_DIR, default ./var).",
    }),
    "api-url": Flags.string({
      summary:
        "The pbxctl API asked for AI-agent extensions (env PBX_API_URL, default PBX_BASE_URL).",
    }),
    pretty: Flags.boolean({
      summary: "Human-readable logs instead of JSON lines.",
      default: false,
    }),
  };

  async run(): Promise<void> {
    const { flags } = await this.parse(IntakeServe);
    const intake = intakeSettingsFrom(process.env);
    const config = loadConfig(process.env, {
      port: flags.port ?? intake.port,
      ...(flags.host !== undefined ? { host: flags.host } : {}),
      ...(flags["data-dir"] !== undefined ? { dataDir: flags["data-dir"] } : {}),
    });
    if (config.internalKey === null) {
      // Alone, the intake is reachable by others: without the key anyone could open tickets (and
      // send their messages) for any org, and the bot-extension lookup could not authenticate.
      this.error(
        "intake serve needs PBX_INTERNAL_KEY: the intake accepts only requests carrying it in X-Internal-Key, and asks the API for AI-agent extensions with it",
        { exit: 1 },
      );
    }
    const apiUrl = (flags["api-url"] ?? intake.apiUrl ?? config.baseUrl).replace(/\/+$/, "");
    const logger = await serverLogger(pino, { pretty: flags.pretty, level: config.logLevel });
    const db = await openStore(config.store);
    const tickets = createTicketService({
      db,
      clock: systemClock,
      serverKey: config.serverKey,
      internalKey: config.internalKey,
      apiUrl: () => apiUrl,
      eventsUrl: null,
      logger,
    });
    const app = createIntakeApp({
      intake: tickets.intake,
      internalKey: config.internalKey,
      logger,
      bodyLimit: config.bodyLimit,
    });
    const server = app.listen(config.port, config.host);
    await new Promise<void>((resolve, reject) => {
      server.once("listening", resolve);
      server.once("error", reject);
    });
    await tickets.start();
    const { address, port } = server.address() as AddressInfo;
    logger.info(
      { url: `http://${address}:${port}${EVENTS_PATH}`, api_url: apiUrl },
      "intake serving",
    );
    await new Promise<void>((resolve) => {
      const stop = (signal: string) => {
        logger.info({ signal }, "shutting down");
        server.close(() => {
          tickets
            .stop()
            .then(() => db.destroy())
            .then(resolve, (error: unknown) => {
              logger.error({ err: error }, "shutdown failed");
              resolve();
            });
        });
        server.closeIdleConnections();
      };
      process.once("SIGTERM", () => stop("SIGTERM"));
      process.once("SIGINT", () => stop("SIGINT"));
    });
  }
}
