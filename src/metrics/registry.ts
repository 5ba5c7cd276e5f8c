// The app's Prometheus registry (prom-client): every metric of docs/metrics.md, the instruments
// that feed them (src/metrics/instruments.ts) and the gauges read at scrape time from the parts
// that know them (the deploy scheduler, live calls, the store's outboxes). One registry per app,
// never prom-client's global one, so tests and several apps in one process do not collide.
import {
  Counter,
  collectDefaultMetrics,
  Gauge,
  Histogram,
  type LabelValues,
  Registry,
} from "prom-client";
import type { AttemptResult, Instruments, OutboxInstruments } from "./instruments.js";

/** The outboxes whose depth and age are measured. */
export const OUTBOXES = ["webhooks", "ticket_messages", "intake_posts"] as const;
export type OutboxName = (typeof OUTBOXES)[number];

export interface OutboxStats {
  /** Rows waiting to be sent (pending or in flight). */
  depth: number;
  /** Age of the oldest of them, 0 when there is none. */
  oldestSeconds: number;
}

/** What is read at scrape time; each part is set once the server has built what it reads. */
export interface MetricSources {
  /** Orgs whose saved configuration the engine has not taken yet, and the oldest one's wait. */
  pendingDeploys?: () => { orgs: number; oldestSeconds: number };
  liveCalls?: () => number;
  /** One cheap store query per outbox. */
  outboxes?: () => Promise<Record<OutboxName, OutboxStats>>;
  /** Age of the oldest call record the ticket poller has not read yet (0: caught up). */
  pollerLagSeconds?: () => Promise<number>;
  /** The readiness of /health/ready. */
  ready?: () => Promise<boolean>;
  /** The SIP edge's shared memory in bytes (PBX_EDGE_DIR); null while it does not answer. */
  edgeSharedMemory?: () => Promise<{ total: number; free: number; maxUsed: number } | null>;
}

export interface Metrics {
  registry: Registry;
  instruments: Instruments;
  /** Adds (or replaces) what the scrape-time gauges read. */
  watch(sources: MetricSources): void;
  /** The text exposition of every metric. */
  scrape(): Promise<string>;
  contentType: string;
}

/** The `engine` label while one engine node serves every org (a node name once there are several). */
export const DEFAULT_ENGINE = "default";

const UNLINTED_DEFAULTS = [
  "nodejs_active_handles_total",
  "nodejs_active_requests_total",
  "nodejs_active_resources_total",
];

const METHODS = new Set(["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]);

const HTTP_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
const DEPLOY_BUCKETS = [0.5, 1, 2, 5, 10, 30, 60, 120, 300, 600];
const RELOAD_BUCKETS = [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];
const LAG_BUCKETS = [0.1, 0.5, 1, 2, 5, 15, 30, 60, 120, 300];
const DELIVERY_BUCKETS = [0.05, 0.1, 0.5, 1, 5, 15, 60, 300, 900, 3600];

/** A new registry with every metric, the default Node.js ones included. */
export function createMetrics(options: { engine?: string } = {}): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  // prom-client also names three gauges `_total`, which `promtool check metrics` rejects (a
  // counter's suffix); each is the sum of the by-type gauge it sits beside, so nothing is lost.
  for (const name of UNLINTED_DEFAULTS) registry.removeSingleMetric(name);
  const registers = [registry];
  const engine = options.engine ?? DEFAULT_ENGINE;
  let sources: MetricSources = {};

  // HTTP: labelled children cached by key, so a request allocates no label object.
  const httpDuration = new Histogram({
    name: "pbx_http_request_duration_seconds",
    help: "Time to answer an HTTP request, by route template, method and status class.",
    labelNames: ["route", "method", "status_class"] as const,
    buckets: HTTP_BUCKETS,
    registers,
  });
  const httpInFlight = new Gauge({
    name: "pbx_http_requests_in_flight",
    help: "HTTP requests being answered now.",
    registers,
  });
  const httpChildren = new Map<string, { observe(value: number): void }>();

  const saveToApplied = new Histogram({
    name: "pbx_deploy_save_to_applied_seconds",
    help: "Time from the first save of a burst to the engine running its configuration.",
    labelNames: ["engine"] as const,
    buckets: DEPLOY_BUCKETS,
    registers,
  });
  const reloadDuration = new Histogram({
    name: "pbx_deploy_reload_duration_seconds",
    help: "Time a queued engine reload took, retries included, by module and result.",
    labelNames: ["engine", "module", "result"] as const,
    buckets: RELOAD_BUCKETS,
    registers,
  });
  const reloadCommands = new Counter({
    name: "pbx_deploy_reload_commands_total",
    help: "Reload commands sent to the engine (each retry counts), by module.",
    labelNames: ["engine", "module"] as const,
    registers,
  });
  const deployFailures = new Counter({
    name: "pbx_deploy_failures_total",
    help: "Background deploys of an org that failed (each is retried with backoff).",
    labelNames: ["engine"] as const,
    registers,
  });
  const deployRetries = new Counter({
    name: "pbx_deploy_retries_total",
    help: "Retries of failed background deploys.",
    labelNames: ["engine"] as const,
    registers,
  });
  new Gauge({
    name: "pbx_deploy_orgs_pending",
    help: "Orgs whose saved configuration the engine does not run yet (desired != applied).",
    labelNames: ["engine"] as const,
    registers,
    collect() {
      this.set({ engine }, sources.pendingDeploys?.().orgs ?? 0);
    },
  });
  new Gauge({
    name: "pbx_deploy_oldest_pending_seconds",
    help: "How long the longest-waiting pending org has waited for its deploy.",
    labelNames: ["engine"] as const,
    registers,
    collect() {
      this.set({ engine }, sources.pendingDeploys?.().oldestSeconds ?? 0);
    },
  });

  const amiConnected = new Gauge({
    name: "pbx_ami_connected",
    help: "1 while the AMI connection is logged in, else 0, by connection.",
    labelNames: ["connection"] as const,
    registers,
  });
  const amiReconnects = new Counter({
    name: "pbx_ami_reconnects_total",
    help: "Logins of an AMI connection after its first one.",
    labelNames: ["connection"] as const,
    registers,
  });
  const amiErrors = new Counter({
    name: "pbx_ami_command_errors_total",
    help: "AMI actions the engine refused or did not answer, by connection and action.",
    labelNames: ["connection", "action"] as const,
    registers,
  });

  const callsIngested = new Counter({
    name: "pbx_call_events_ingested_total",
    help: "Call records and journey events from the engine, by kind and result.",
    labelNames: ["kind", "result"] as const,
    registers,
  });
  const ingestLag = new Histogram({
    name: "pbx_call_ingest_lag_seconds",
    help: "Time from the engine's event time to the event being stored.",
    buckets: LAG_BUCKETS,
    registers,
  });
  const callsDropped = new Counter({
    name: "pbx_call_events_dropped_total",
    help: "Call records and journey events not stored: rejected by the store, the oldest held beyond the cap while the store was unavailable, or still held at shutdown.",
    labelNames: ["reason"] as const,
    registers,
  });
  const registrationsDropped = new Counter({
    name: "pbx_registration_changes_dropped_total",
    help: "Phones' contact changes and trunk registration lists from the engine not stored: rejected by the store, the oldest held beyond the cap while the store was unavailable, or still held at shutdown.",
    labelNames: ["kind", "reason"] as const,
    registers,
  });
  const ingestsHolding = new Gauge({
    name: "pbx_call_ingest_store_unavailable",
    help: "Call ingests (one per engine followed) holding their events because the store is unavailable.",
    registers,
  });
  const recordsStored = new Counter({
    name: "pbx_call_records_stored_total",
    help: "Call records stored (replays and duplicates not counted).",
    registers,
  });
  new Gauge({
    name: "pbx_live_calls",
    help: "Live calls the engine's events show now.",
    registers,
    collect() {
      this.set(sources.liveCalls?.() ?? 0);
    },
  });

  // Outboxes: one query for all three, shared by the two gauges of one scrape.
  let outboxRead: Promise<Record<OutboxName, OutboxStats> | null> | null = null;
  const readOutboxes = () => {
    outboxRead ??= (sources.outboxes?.() ?? Promise.resolve(null)).finally(() => {
      setImmediate(() => {
        outboxRead = null;
      });
    });
    return outboxRead;
  };
  new Gauge({
    name: "pbx_outbox_depth",
    help: "Rows waiting to be sent (pending or in flight), by outbox.",
    labelNames: ["outbox"] as const,
    registers,
    async collect() {
      const stats = await readOutboxes();
      for (const outbox of OUTBOXES) this.set({ outbox }, stats?.[outbox].depth ?? 0);
    },
  });
  new Gauge({
    name: "pbx_outbox_oldest_pending_seconds",
    help: "Age of the oldest row waiting to be sent, by outbox (0 when empty).",
    labelNames: ["outbox"] as const,
    registers,
    async collect() {
      const stats = await readOutboxes();
      for (const outbox of OUTBOXES) this.set({ outbox }, stats?.[outbox].oldestSeconds ?? 0);
    },
  });
  const outboxAttempts = new Counter({
    name: "pbx_outbox_attempts_total",
    help: "Send attempts by outbox and result (2xx, 4xx, 5xx, timeout, refused by the address guard, error).",
    labelNames: ["outbox", "result"] as const,
    registers,
  });
  const deliveryLatency = new Histogram({
    name: "pbx_outbox_delivery_latency_seconds",
    help: "Time from a row's creation to its successful delivery, by outbox.",
    labelNames: ["outbox"] as const,
    buckets: DELIVERY_BUCKETS,
    registers,
  });
  const endpointsDisabled = new Counter({
    name: "pbx_webhook_endpoints_disabled_total",
    help: "Webhook endpoints deactivated, by reason (gone, too_many_failures).",
    labelNames: ["reason"] as const,
    registers,
  });

  new Gauge({
    name: "pbx_ticket_poller_lag_seconds",
    help: "Age of the oldest call record the ticket poller has not read yet (0 when caught up).",
    registers,
    async collect() {
      this.set((await sources.pollerLagSeconds?.()) ?? 0);
    },
  });
  const ticketsOpened = new Counter({
    name: "pbx_tickets_opened_total",
    help: "Tickets opened by the auto-ticket intake, by source.",
    labelNames: ["source"] as const,
    registers,
  });
  const purged = new Counter({
    name: "pbx_retention_purged_total",
    help: "Rows or files deleted by the retention purge, by kind.",
    labelNames: ["kind"] as const,
    registers,
  });
  new Gauge({
    name: "pbx_edge_shm_bytes",
    help: "The SIP edge's shared memory (its transactions live there), by kind: total, free, max_used (the most ever held).",
    labelNames: ["kind"] as const,
    registers,
    async collect() {
      // No series at all without an edge, or while it does not answer: never a made-up 0.
      this.reset();
      const shm = await sources.edgeSharedMemory?.();
      if (!shm) return;
      this.set({ kind: "total" }, shm.total);
      this.set({ kind: "free" }, shm.free);
      this.set({ kind: "max_used" }, shm.maxUsed);
    },
  });
  new Gauge({
    name: "pbx_ready",
    help: "1 when /health/ready answers 200 (store reachable, migrations applied, not shutting down).",
    registers,
    async collect() {
      this.set(sources.ready ? ((await sources.ready()) ? 1 : 0) : 1);
    },
  });

  const outbox = (name: OutboxName): OutboxInstruments => ({
    attempt(result: AttemptResult, deliveredAfterSeconds: number | null) {
      outboxAttempts.inc({ outbox: name, result });
      if (deliveredAfterSeconds !== null)
        deliveryLatency.observe({ outbox: name }, deliveredAfterSeconds);
    },
  });
  const amiByConnection = new Map<string, ReturnType<Instruments["ami"]>>();

  const instruments: Instruments = {
    http: {
      started: () => httpInFlight.inc(),
      finished(route, method, status, seconds) {
        httpInFlight.dec();
        const verb = METHODS.has(method) ? method : "OTHER";
        const statusClass = `${Math.floor(status / 100)}xx`;
        const key = `${verb} ${statusClass} ${route}`;
        let child = httpChildren.get(key);
        if (!child) {
          const labels: LabelValues<"route" | "method" | "status_class"> = {
            route,
            method: verb,
            status_class: statusClass,
          };
          child = httpDuration.labels(labels);
          httpChildren.set(key, child);
        }
        child.observe(seconds);
      },
    },
    reloads: {
      commandSent: (module) => reloadCommands.inc({ engine, module }),
      reloaded: (module, result, seconds) =>
        reloadDuration.observe({ engine, module, result }, seconds),
    },
    deploys: {
      applied: (seconds) => saveToApplied.observe({ engine }, seconds),
      failed: () => deployFailures.inc({ engine }),
      retried: () => deployRetries.inc({ engine }),
    },
    ami(connection) {
      let made = amiByConnection.get(connection);
      if (!made) {
        made = {
          connected: (up) => amiConnected.set({ connection }, up ? 1 : 0),
          reconnected: () => amiReconnects.inc({ connection }),
          commandError: (action) => amiErrors.inc({ connection, action }),
        };
        amiByConnection.set(connection, made);
      }
      return made;
    },
    calls: {
      ingested(kind, result, lagSeconds) {
        callsIngested.inc({ kind, result });
        if (result !== "stored") return;
        if (kind === "record") recordsStored.inc();
        if (lagSeconds !== null) ingestLag.observe(Math.max(0, lagSeconds));
      },
      dropped: (reason, count) => callsDropped.inc({ reason }, count),
      storeUnavailable: (holding) => (holding ? ingestsHolding.inc() : ingestsHolding.dec()),
      registrationsDropped: (kind, reason, count) =>
        registrationsDropped.inc({ kind, reason }, count),
    },
    webhooks: {
      ...outbox("webhooks"),
      endpointDisabled: (reason) => endpointsDisabled.inc({ reason }),
    },
    ticketMessages: outbox("ticket_messages"),
    intakePosts: outbox("intake_posts"),
    tickets: { opened: (source) => ticketsOpened.inc({ source }) },
    retention: { purged: (kind, count) => purged.inc({ kind }, count) },
  };

  return {
    registry,
    instruments,
    watch(more) {
      sources = { ...sources, ...more };
    },
    scrape: () => registry.metrics(),
    contentType: registry.contentType,
  };
}
