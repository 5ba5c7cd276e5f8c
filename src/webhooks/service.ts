// Wiring for the server: the dispatcher that runs beside the API, and the context the webhook
// routes pass to the use cases. Both seal secrets with the server key and read
// PBX_WEBHOOK_ALLOW_PRIVATE from the environment.
import type { Clock } from "../domain/ports.js";
import { createDispatcher, type DispatcherLogger, type WebhookDispatcher } from "./dispatcher.js";
import { createNodeHttpClient, type NodeHttpClient } from "./http-client.js";
import { sealWithKey } from "./secrets.js";
import { allowPrivateTargets } from "./settings.js";
import type { AnyDb } from "./tables.js";
import type { WebhookContext } from "./use-cases.js";

export interface WebhookService {
  dispatcher: WebhookDispatcher;
  /** Stops the dispatcher (waiting for attempts in flight) and closes its sockets. */
  stop(): Promise<void>;
}

/** Starts delivering the outbox of `db`; call `stop()` before closing the store. */
export async function startWebhookService(options: {
  db: AnyDb;
  serverKey: Buffer;
  logger?: DispatcherLogger;
  env?: NodeJS.ProcessEnv;
  concurrency?: number;
}): Promise<WebhookService> {
  const http = createNodeHttpClient({ allowPrivate: allowPrivateTargets(options.env) });
  const dispatcher = createDispatcher({
    db: options.db,
    http,
    secrets: sealWithKey(options.serverKey),
    ...(options.logger ? { logger: options.logger } : {}),
    ...(options.concurrency ? { concurrency: options.concurrency } : {}),
  });
  await dispatcher.start();
  return {
    dispatcher,
    async stop() {
      await dispatcher.stop();
      http.close();
    },
  };
}

const httpClients = new Map<boolean, NodeHttpClient>();

/** The use-case context for a request of the API (one shared HTTP client per guard setting). */
export function webhookContext(options: {
  db: AnyDb;
  clock: Clock;
  serverKey: Buffer;
  env?: NodeJS.ProcessEnv;
}): WebhookContext {
  const allowPrivate = allowPrivateTargets(options.env);
  let http = httpClients.get(allowPrivate);
  if (!http) {
    http = createNodeHttpClient({ allowPrivate });
    httpClients.set(allowPrivate, http);
  }
  return {
    db: options.db,
    clock: options.clock,
    secrets: sealWithKey(options.serverKey),
    http,
    urlPolicy: { allowPrivate },
  };
}
