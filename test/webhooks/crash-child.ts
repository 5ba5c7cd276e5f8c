// Child process of the crash test: runs a dispatcher over the SQLite file argv[2] with
// concurrency argv[3], until the parent kills it with SIGKILL.
import { createDispatcher } from "../../src/webhooks/dispatcher.js";
import { createNodeHttpClient } from "../../src/webhooks/http-client.js";
import { openWebhookDb } from "./helpers.js";

const [file, concurrency] = process.argv.slice(2) as [string, string];
const db = await openWebhookDb(file, false);
const dispatcher = createDispatcher({
  db,
  http: createNodeHttpClient({ allowPrivate: true }),
  concurrency: Number(concurrency),
});
await dispatcher.start();
process.stdout.write("started\n");
// Keep the process alive: the dispatcher's timers are unref'd.
setInterval(() => {}, 60_000);
