// Wiring of the webhooks for the server: the dispatcher that runs beside the API, and the context
// the webhook routes pass to the use cases. Both seal secrets with the server key; whether private
// targets are allowed comes from the configuration (PBX_WEBHOOK_ALLOW_PRIVATE, src/config.ts).
import type { Clock } from "../../clock.js";
import type { WebhookInstruments } from "../../metrics/instruments.js";
import type { Db } from "../../store/database.js";
import {
  createDispatcher,
  type DispatcherLogger,
  type WebhookDispatcher,
} from "../../webhooks/dispatcher.js";
import { createNodeHttpClient, type NodeHttpClient } from "../../webhooks/http-client.js";
import type { SecretSealer } from "../../webhooks/secrets.js";
import { decrypt, encrypt } from "../secrets.js";
import type { WebhookContext } from "./webhooks.js";

/** AES-256-GCM under the server key (the same sealing as the org keys). */
export function sealWithKey(key: Buffer): SecretSealer {
  return { seal: (plain) => encrypt(plain, key), open: (stored) => decrypt(stored, key) };
}

export interface WebhookService {
  dispatcher: WebhookDispatcher;
  /** Stops the dispatcher (waiting for attempts in flight) and closes its sockets. */
  stop(): Promise<void>;
}

/** Starts delivering the outbox of `db`; call `stop()` before closing the store. */
export async function startWebhookService(options: {
  db: Db;
  serverKey: Buffer;
  allowPrivate: boolean;
  logger?: DispatcherLogger;
  concurrency?: number;
  instruments?: WebhookInstruments;
}): Promise<WebhookService> {
  const http = createNodeHttpClient({ allowPrivate: options.allowPrivate });
  const dispatcher = createDispatcher({
    db: options.db,
    http,
    secrets: sealWithKey(options.serverKey),
    ...(options.logger ? { logger: options.logger } : {}),
    ...(options.concurrency ? { concurrency: options.concurrency } : {}),
    ...(options.instruments ? { instruments: options.instruments } : {}),
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
  db: Db;
  clock: Clock;
  serverKey: Buffer;
  allowPrivate: boolean;
}): WebhookContext {
  const { allowPrivate } = options;
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
