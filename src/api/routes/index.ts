// Every route file of the API. To add a resource: write `routes/<resource>.ts` exporting an
// array of `defineRoute(...)` and add one line here.
import type { RouteDefinition } from "../registry.js";
import { apiKeyRoutes } from "./api-keys.js";
import { authRoutes } from "./auth.js";
import { callFlowRoutes } from "./call-flow.js";
import { callRoutes } from "./calls.js";
import { complianceRoutes } from "./compliance.js";
import { configRoutes } from "./config.js";
import { crmRoutes } from "./crm.js";
import { customerTunnelRoutes } from "./customer-tunnels.js";
import { didPoolRoutes } from "./did-pool.js";
import { didRoutes } from "./dids.js";
import { engineNodeRoutes } from "./engine-nodes.js";
import { ivrRoutes } from "./ivrs.js";
import { mediaFileRoutes } from "./media.js";
import { orgMoveRoutes } from "./org-moves.js";
import { orgUserRoutes } from "./org-users.js";
import { organizationRoutes } from "./organizations.js";
import { outboundRouteRoutes } from "./outbound-routes.js";
import { queueRoutes } from "./queues.js";
import { replicaRoleRoutes } from "./replica-roles.js";
import { settingsRoutes } from "./settings.js";
import { ticketAlertRoutes } from "./ticket-alerts.js";
import { ticketRoutes } from "./tickets.js";
import { timeConditionRoutes } from "./time-conditions.js";
import { trunkRoutes } from "./trunks.js";
import { ttsRoutes } from "./tts.js";
import { userRoutes } from "./users.js";
import { webhookRoutes } from "./webhooks.js";

export const allRoutes: readonly RouteDefinition[] = [
  ...authRoutes,
  ...organizationRoutes,
  ...apiKeyRoutes,
  ...orgUserRoutes,
  ...configRoutes,
  ...[
    didRoutes,
    didPoolRoutes,
    trunkRoutes,
    outboundRouteRoutes,
    settingsRoutes,
    mediaFileRoutes,
    userRoutes,
    queueRoutes,
    ivrRoutes,
    timeConditionRoutes,
    ttsRoutes,
    webhookRoutes,
    callRoutes,
    callFlowRoutes,
    crmRoutes,
    customerTunnelRoutes,
    engineNodeRoutes,
    orgMoveRoutes,
    replicaRoleRoutes,
    complianceRoutes,
    ticketRoutes,
    ticketAlertRoutes,
  ].flat(),
];
