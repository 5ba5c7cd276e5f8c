// The Koa application: security headers, request ids, errors, JSON bodies, /health, the
// documentation pages and every registered route under /api/v1.
import { readFileSync } from "node:fs";
import Koa, { type Middleware } from "koa";
import compose from "koa-compose";
import { type Logger, pino } from "pino";
import { type Clock, systemClock } from "../clock.js";
import type { Config } from "../config.js";
import { createTokenService } from "../domain/access/tokens.js";
import { createOidcVerifier, type IdentityVerifier } from "../domain/access/user-login.js";
import type { CallControlPort } from "../domain/calls/call-control.js";
import { type LiveCallsView, noLiveCalls } from "../domain/calls/live-calls.js";
import type { ConfigDeploys } from "../domain/config/config-deploy.js";
import { roleKinds } from "../domain/operations/role-holders.js";
import type { DeployScheduler, EngineHealthProbe } from "../domain/ports.js";
import { createMetrics, type Metrics } from "../metrics/registry.js";
import { changeFeedState, type Db, storeIsHealthy } from "../store/database.js";
import { storeDialect } from "../store/dialect.js";
import type { TicketIntake } from "../tickets/intake.js";
import { createSpeechEngine, type SpeechEngine } from "../tts/index.js";
import { type AppDeps, apiSettingsOf } from "./deps.js";
import { docsPages, docsPaths } from "./docs-pages.js";
import { errorMiddleware } from "./error-middleware.js";
import { healthProbes, LIVE_PATH, READY_PATH } from "./health-probes.js";
import { fixedRouteNamer, httpMetrics } from "./http-metrics.js";
import { EVENTS_PATH, intakeMiddleware } from "./intake-app.js";
import { adminMetrics, METRICS_PATH } from "./metrics-endpoint.js";
import { buildOpenApiDocument } from "./openapi.js";
import { Readiness } from "./readiness.js";
import type { RouteDefinition } from "./registry.js";
import { jsonBodyParser } from "./request-body.js";
import { API_PREFIX, buildRouter } from "./router.js";
import { allRoutes } from "./routes/index.js";
import { requestIdAndSecurityHeaders } from "./security-headers.js";

export interface CreateAppOptions {
  db: Db;
  config: Config;
  deployScheduler: DeployScheduler;
  /** Deploys on request for `/config/*` (the server's store-backed deploys); absent: 503. */
  configDeploys?: ConfigDeploys;
  /** Engine state for /health; default `files-only`. */
  engineHealth?: EngineHealthProbe;
  /** Text to speech (previews, IVR greetings); default from PBX_TTS_ENGINE, started on first use. */
  speechEngine?: SpeechEngine;
  clock?: Clock;
  logger?: Logger;
  /** Default: an OIDC verifier when PBX_OIDC_* are set, else none (user login answers 503). */
  identityVerifier?: IdentityVerifier | null;
  /** Live calls from the engine's events; default: none tracked. */
  liveCalls?: LiveCallsView;
  /** Actions on live calls; default none (503 on hangup). */
  callControl?: CallControlPort | null;
  /** Default: every route of src/api/routes. */
  routes?: readonly RouteDefinition[];
  /** The auto-ticket intake, answered under /events (SPEC.md §4.7); absent: not mounted. */
  ticketIntake?: TicketIntake;
  /**
   * This replica's id and the lease names of the roles it holds now (absent: not said). `/health`
   * says only their kinds: it needs no authentication, and the names carry AMI addresses and node
   * ids (admins read those at `/admin/replica-roles`).
   */
  replica?: { id: string; roles: () => string[] };
  /** The media directories' state for `/health` (`{ sounds: "ok", ... }`); absent: not said. */
  mediaDirs?: () => Promise<Record<string, string>>;
  /** The app's metrics registry; default a new one; null: nothing measured (the bench's baseline). */
  metrics?: Metrics | null;
}

export interface PbxApp {
  app: Koa;
  deps: AppDeps;
  /** What /metrics serves; null when built without metrics. */
  metrics: Metrics | null;
  /** What /health/ready answers; the server marks it shutting down first on SIGTERM. */
  readiness: Readiness;
  /** The OpenAPI document served at /api-spec.json. */
  document: Record<string, unknown>;
}

// From dist/api/ (tsc's output and serve's bundle alike) and src/api/: two levels up either way.
function packageVersion(): string {
  const pkg = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as {
    version: string;
  };
  return pkg.version;
}

const API_PATH_PREFIX = `${API_PREFIX}/`;

/** Whether `path` is under /api/v1, where only the router answers. */
function isApiPath(path: string): boolean {
  return path.startsWith(API_PATH_PREFIX);
}

/** Builds the app; nothing listens until the caller calls `app.listen` (see server.ts). */
export function createApp(options: CreateAppOptions): PbxApp {
  const clock = options.clock ?? systemClock;
  const logger = options.logger ?? pino({ level: options.config.logLevel });
  const deps: AppDeps = {
    db: options.db,
    config: apiSettingsOf(options.config),
    clock,
    tokens: createTokenService(options.config.jwtSecret, clock),
    deployScheduler: options.deployScheduler,
    ...(options.configDeploys ? { configDeploys: options.configDeploys } : {}),
    speechEngine: options.speechEngine ?? createSpeechEngine(),
    identityVerifier:
      options.identityVerifier !== undefined
        ? options.identityVerifier
        : options.config.oidc
          ? createOidcVerifier(options.config.oidc)
          : null,
    engineHealth: options.engineHealth ?? (() => "files-only"),
    liveCalls: options.liveCalls ?? noLiveCalls,
    callControl: options.callControl ?? null,
    logger,
  };
  const routes = options.routes ?? allRoutes;
  // Built by its first reader (/api-spec.json, the documentation pages, tests): a few percent of
  // the start-up's CPU that no request to the API needs (docs/performance.md, start-up).
  let document: Record<string, unknown> | undefined;
  const documentOnFirstUse = () =>
    (document ??= buildOpenApiDocument(routes, {
      baseUrl: options.config.baseUrl,
      version: packageVersion(),
    }));
  const router = buildRouter(routes, deps);
  const metrics = options.metrics === undefined ? createMetrics() : options.metrics;
  const readiness = new Readiness(deps.db);

  const app = new Koa({ proxy: false });
  app.silent = true;
  if (metrics) {
    metrics.watch({ ready: async () => (await readiness.check()).ready });
    const docs = docsPaths();
    const nameFixed = fixedRouteNamer(
      ["/health", LIVE_PATH, READY_PATH, METRICS_PATH, ...docs.paths],
      [docs.assetPrefix, `${EVENTS_PATH}/`],
    );
    app.use(httpMetrics(metrics.instruments.http, nameFixed));
  }
  app.use(requestIdAndSecurityHeaders);
  app.use(errorMiddleware(logger));
  const health: Middleware = async (ctx, next) => {
    if (ctx.path !== "/health" || ctx.method !== "GET") return next();
    const store = (await storeIsHealthy(deps.db)) ? "ok" : "error";
    let engine: string;
    try {
      engine = await deps.engineHealth();
    } catch {
      engine = "error";
    }
    // The load balancer's check is the status code: a replica that cannot reach the store is
    // taken out. Media that fail are said (greetings and recordings fail on this replica) but
    // keep the rest of the API in service.
    ctx.status = store === "ok" ? 200 : 503;
    const changeFeed = changeFeedState(deps.db);
    ctx.body = {
      status: store === "ok" ? "ok" : "degraded",
      store,
      engine,
      database: storeDialect(deps.db),
      ...(changeFeed ? { change_feed: changeFeed } : {}),
      ...(options.replica
        ? { replica: options.replica.id, roles: roleKinds(options.replica.roles()) }
        : {}),
      ...(options.mediaDirs ? { media: await options.mediaDirs() } : {}),
    };
  };
  // What the app answers outside /api/v1 (health, metrics, documentation, the intake). None of
  // it answers a path under /api/v1/, so an API request skips it all on one prefix test instead
  // of entering and leaving each layer, a call and a promise apiece (docs/performance.md).
  const outsideApi = compose([
    health,
    healthProbes(readiness),
    ...(metrics ? [adminMetrics(metrics, deps)] : []),
    docsPages(documentOnFirstUse),
  ]);
  app.use((ctx, next) => (isApiPath(ctx.path) ? next() : outsideApi(ctx, next)));
  app.use(jsonBodyParser(options.config.bodyLimit));
  if (options.ticketIntake) {
    const intake = intakeMiddleware(options.ticketIntake, {
      internalKey: options.config.internalKey,
    });
    app.use((ctx, next) => (isApiPath(ctx.path) ? next() : intake(ctx, next)));
  }
  app.use(router.routes());
  app.use(router.allowedMethods());
  return {
    app,
    deps,
    get document() {
      return documentOnFirstUse();
    },
    metrics,
    readiness,
  };
}
