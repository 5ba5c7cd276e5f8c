// Every migration, in the order it runs. To change the schema, add a new file numbered ABOVE the
// highest one on main (the last entry of the list below) and one line at the end of the list;
// never edit a migration that has shipped. Kysely runs migrations in name order and refuses a
// pending one that sorts before an applied one, so a number below the highest would break every
// store already migrated.
import type { Migration } from "kysely";
import * as organizations from "./0001-organizations.js";
import * as apiKeys from "./0002-api-keys.js";
import * as orgUsers from "./0003-org-users.js";
import * as extensionClaims from "./0004-extension-claims.js";
import * as users from "./0005-users.js";
import * as queues from "./0006-queues.js";
import * as ivrs from "./0007-ivrs.js";
import * as trunks from "./0008-trunks.js";
import * as outboundRoutes from "./0009-outbound-routes.js";
import * as dids from "./0010-dids.js";
import * as didInvariants from "./0301-did-invariants.js";
import * as deployRecords from "./0501-deploy-records.js";
import * as webhooks from "./0701-webhooks.js";
import * as callRecords from "./1201-call-records.js";
import * as orgSlugs from "./1901-org-slugs.js";
import * as idempotencyKeys from "./2001-idempotency-keys.js";
import * as sipContacts from "./2101-sip-contacts.js";
import * as trunkRegistrations from "./2201-trunk-registrations.js";
import * as tickets from "./2401-tickets.js";
import * as crm from "./2501-crm.js";
import * as customerTunnels from "./2502-customer-tunnels.js";
import * as compliance from "./2601-compliance.js";
import * as loginThrottle from "./2802-login-throttle.js";
import * as didSource from "./2803-did-source.js";
import * as orgLedIndexes from "./2804-org-led-indexes.js";
import * as replicaCoordination from "./2901-replica-coordination.js";
import * as pjsipRealtime from "./2950-pjsip-realtime.js";
import * as changeNotifications from "./2960-change-notifications.js";
import * as leaseEpochs from "./2961-lease-epochs.js";
import * as deployJobs from "./2962-deploy-jobs.js";
import * as engineNodes from "./2970-engine-nodes.js";
import * as nodeDeploys from "./2980-node-deploys.js";
import * as callNodes from "./2981-call-nodes.js";
import * as aorSupportPath from "./2990-aor-support-path.js";
import * as edgeSync from "./2991-edge-sync.js";
import * as nodeDeployRequests from "./2995-node-deploy-requests.js";
import * as orgMoves from "./3000-org-moves.js";
import * as timeConditions from "./3010-time-conditions.js";
import * as nodeRealtimeViews from "./3020-node-realtime-views.js";
import * as nodeSystemNames from "./3021-node-system-names.js";
import * as realtimeDebtOfGoneEngines from "./3022-realtime-debt-of-gone-engines.js";
import * as rowsOfRemovedNodes from "./3023-rows-of-removed-nodes.js";

export const migrations: ReadonlyArray<readonly [name: string, migration: Migration]> = [
  ["0001-organizations", organizations],
  ["0002-api-keys", apiKeys],
  ["0003-org-users", orgUsers],
  ["0004-extension-claims", extensionClaims],
  ["0005-users", users],
  ["0006-queues", queues],
  ["0007-ivrs", ivrs],
  ["0008-trunks", trunks],
  ["0009-outbound-routes", outboundRoutes],
  ["0010-dids", dids],
  ["0301-did-invariants", didInvariants],
  ["0501-deploy-records", deployRecords],
  ["0701-webhooks", webhooks],
  ["1201-call-records", callRecords],
  ["1901-org-slugs", orgSlugs],
  ["2001-idempotency-keys", idempotencyKeys],
  ["2101-sip-contacts", sipContacts],
  ["2201-trunk-registrations", trunkRegistrations],
  ["2401-tickets", tickets],
  ["2501-crm", crm],
  ["2502-customer-tunnels", customerTunnels],
  ["2601-compliance", compliance],
  ["2802-login-throttle", loginThrottle],
  ["2803-did-source", didSource],
  ["2804-org-led-indexes", orgLedIndexes],
  ["2901-replica-coordination", replicaCoordination],
  ["2950-pjsip-realtime", pjsipRealtime],
  ["2960-change-notifications", changeNotifications],
  ["2961-lease-epochs", leaseEpochs],
  ["2962-deploy-jobs", deployJobs],
  ["2970-engine-nodes", engineNodes],
  ["2980-node-deploys", nodeDeploys],
  ["2981-call-nodes", callNodes],
  ["2990-aor-support-path", aorSupportPath],
  ["2991-edge-sync", edgeSync],
  ["2995-node-deploy-requests", nodeDeployRequests],
  ["3000-org-moves", orgMoves],
  ["3010-time-conditions", timeConditions],
  ["3020-node-realtime-views", nodeRealtimeViews],
  ["3021-node-system-names", nodeSystemNames],
  ["3022-realtime-debt-of-gone-engines", realtimeDebtOfGoneEngines],
  ["3023-rows-of-removed-nodes", rowsOfRemovedNodes],
];
