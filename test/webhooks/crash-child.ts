// Child process of the crash test: runs a dispatcher over the store argv[2] (a SQLite file or a
// PostgreSQL URL) with concurrency argv[3], until the parent kills it with SIGKILL.
import { createDispatcher } from "../../src/webhooks/dispatcher.js";
import { createNodeHttpClient } from "../../src/webhooks/http-client.js";
import { openWebhookDb } from "./helpers.js";

async function main(file: string, concurrency: string): Promise<void> {
  const db = await openWebhookDb(file, false);
  const dispatcher = createDispatcher({
    db,
    http: createNodeHttpClient({ allowPrivate: true }),
    concurrency: Number(concurrency),
    leaseMarginMs: 500,
  });
  await dispatcher.start();
  process.stdout.write("started\n");
  // Keep the process alive: the dispatcher's timers are unref'd.
  setInterval(() => {}, 60_000);
}

// Only as the crash test's child: loaded by a runner globbing test/, it would never exit.
if (process.env.PBX_CRASH_CHILD === "1") {
  const [file, concurrency] = process.argv.slice(2) as [string, string];
  await main(file, concurrency);
}
