
import { pino } from "pino";
import { loadConfig, startServer } from "/work/wt/32c/dist/api/serve-modules.js";
const config = loadConfig(process.env, { port: Number(process.env.PORT), dataDir: process.env.DATA_DIR });
const logger = pino({ level: "warn" });
const running = await startServer({
  config,
  logger,
  env: process.env,
  ...(process.env.METRICS === "off" ? { metrics: null } : {}),
});
process.once("SIGTERM", () => running.close().then(() => process.exit(0)));
