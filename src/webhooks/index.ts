// The webhook module: event types, the outbox (`emitEvent`), the dispatcher, the use cases of
// the /webhooks routes, and the migration of its two tables.
export { createDeliveryRepository, type DeliveryRepository } from "./delivery-repository.js";
export {
  createDispatcher,
  type DispatcherOptions,
  type Timers,
  type WebhookDispatcher,
} from "./dispatcher.js";
export {
  CALL_LIFECYCLE,
  isWebhookEvent,
  parseWebhookEvent,
  TEST_EVENT,
  WEBHOOK_EVENTS,
  type WebhookEvent,
} from "./events.js";
export {
  createNodeHttpClient,
  type NodeHttpClient,
  type WebhookHttpClient,
  type WebhookHttpResponse,
} from "./http-client.js";
export * as webhookMigration from "./migration.js";
export { type EmittedEvent, emitEvent, outboxSignal } from "./outbox.js";
export { maskSecret, plainSecrets, type SecretSealer, sealWithKey } from "./secrets.js";
export { startWebhookService, type WebhookService, webhookContext } from "./service.js";
export * from "./settings.js";
export { simulateCallEvent } from "./simulate-call.js";
export * from "./use-cases.js";
export { createWebhookRepository, type WebhookRepository } from "./webhook-repository.js";
