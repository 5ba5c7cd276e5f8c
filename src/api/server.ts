// Starts the HTTP server over a migrated store and stops it cleanly.
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { Logger } from "pino";
import type { Config } from "../config.js";
import { type DeployScheduler, type EngineHealthProbe, noDeploys } from "../domain/ports.js";
import { type Db, openStore } from "../store/database.js";
import { createApp, type PbxApp } from "./app.js";

export interface RunningServer {
  url: string;
  server: Server;
  pbx: PbxApp;
  /** Stops accepting connections, waits for open requests, closes the store. */
  close(): Promise<void>;
}

export interface StartServerOptions {
  config: Config;
  logger: Logger;
  db?: Db;
  deployScheduler?: DeployScheduler;
  engineHealth?: EngineHealthProbe;
}

/** Opens (and migrates) the store, builds the app and listens on config.host:config.port. */
export async function startServer(options: StartServerOptions): Promise<RunningServer> {
  const db = options.db ?? (await openStore(options.config.dbFile));
  const pbx = createApp({
    db,
    config: options.config,
    logger: options.logger,
    deployScheduler: options.deployScheduler ?? noDeploys,
    ...(options.engineHealth ? { engineHealth: options.engineHealth } : {}),
  });
  const server = pbx.app.listen(options.config.port, options.config.host);
  await new Promise<void>((resolve, reject) => {
    server.once("listening", resolve);
    server.once("error", reject);
  });
  const { address, port } = server.address() as AddressInfo;
  const host = address.includes(":") ? `[${address}]` : address;
  return {
    url: `http://${host}:${port}`,
    server,
    pbx,
    async close() {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
      });
      await db.destroy();
    },
  };
}
