// Row types of every table, as Kysely sees them. Booleans are integers (0/1) and lists are JSON
// text so that the same columns work in SQLite and PostgreSQL; repositories convert at the edge.
import type { Generated, Insertable, Selectable, Updateable } from "kysely";
import type { OrganizationRecord, OrgUserRecord } from "../model/stored-records.js";
import type { DeliveryRecord, WebhookRecord } from "../model/webhook-records.js";
import type { CallEventsTable, CallRecordsTable, CallsTable } from "./call-tables.js";
import type {
  AuditLogTable,
  AuditPurgeGateTable,
  ConsentRecordsTable,
  RetentionPoliciesTable,
} from "./compliance-tables.js";
import type { CrmFieldsTable, CrmRecordsTable } from "./crm-repository.js";
import type { CustomerTunnelsTable } from "./customer-tunnel-repository.js";
import type { EdgeAppliesTable, EdgeSyncRequestsTable } from "./edge-sync-repository.js";
import type { EngineNodesTable, OrgPlacementsTable } from "./engine-node-repository.js";
import type { IdempotencyKeysTable } from "./idempotency-key-repository.js";
import type { LoginThrottleTable } from "./login-throttle-repository.js";
import type { OrgMovesTable } from "./org-move-repository.js";
import type { SipContactsTable } from "./sip-contact-repository.js";
import type { TicketTables } from "./ticket-tables.js";
import type { TrunkRegistrationsTable } from "./trunk-registration-repository.js";

/** The org row is the model's record (src/model/stored-records.ts). */
export type OrganizationsTable = OrganizationRecord;

export interface ApiKeysTable {
  id: string;
  org_id: string;
  name: string;
  key_digest: string;
  /** First characters of the key, enough for a person to recognise it in a list. */
  key_prefix: string;
  secret_hash: string;
  /** JSON array of permission names. */
  permissions: string;
  revoked_at: string | null;
  created_at: string;
}

/** The platform user row is the model's record (src/model/stored-records.ts). */
export type OrgUsersTable = OrgUserRecord;

export interface ExtensionClaimsTable {
  org_id: string;
  extension: string;
  /** `user`, `ivr` or `queue`. */
  owner_type: string;
  owner_id: string;
  created_at: string;
}

export interface UsersTable {
  id: string;
  org_id: string;
  extension: string;
  name: string;
  routing_type: string;
  status: string;
  ring_target: string;
  phone_number: string | null;
  ring_time: number;
  outbound_did: string | null;
  call_recording: number;
  sip_md5_cred: string | null;
  sip_password_env: string | null;
  created_at: string;
  updated_at: string;
}

export interface QueuesTable {
  id: string;
  org_id: string;
  number: string;
  name: string;
  strategy: string;
  moh: string;
  max_wait: number;
  timeout_destination_type: string;
  timeout_destination: string | null;
  created_at: string;
  updated_at: string;
}

export interface QueueMembersTable {
  id: string;
  queue_id: string;
  extension: string;
  penalty: number;
  ring_time: number;
  position: number;
}

export interface IvrsTable {
  id: string;
  org_id: string;
  name: string;
  extension: string;
  description: string;
  timeout: number;
  max_retries: number;
  status: string;
  greeting_language: string;
  greeting_voice: string;
  greeting_prompt: string | null;
  direct_extension_dial: number;
  created_at: string;
  updated_at: string;
}

export interface IvrOptionsTable {
  id: string;
  ivr_id: string;
  digit: string;
  action_type: string;
  action_destination: string | null;
  description: string;
  position: number;
}

export interface DidsTable {
  id: string;
  /** Null while the number sits in the pool unassigned. */
  org_id: string | null;
  number: string;
  status: string;
  pool_status: string;
  is_default: number;
  routing_type: string | null;
  routing_destination: string | null;
  routing_environment: string;
  /** `pool` (the platform's) or `org` (added by the org itself); migration 2803. */
  source: Generated<string>;
  created_at: string;
  updated_at: string;
}

export interface DidRequestsTable {
  id: string;
  did_id: string;
  org_id: string;
  status: string;
  requested_by: string | null;
  created_at: string;
  decided_at: string | null;
}

export interface TrunksTable {
  id: string;
  org_id: string;
  name: string;
  host: string;
  port: number;
  transport: string;
  username: string | null;
  password: string | null;
  password_env: string | null;
  registration: number;
  /** JSON array of codec names. */
  codecs: string;
  /** JSON array of hosts. */
  match_hosts: string;
  created_at: string;
  updated_at: string;
}

export interface TimeConditionsTable {
  id: string;
  org_id: string;
  name: string;
  description: string;
  time_zone: string;
  /** JSON array of the model's TimeRange. */
  ranges: string;
  /** JSON array of the model's TimeException. */
  exceptions: string;
  open_destination_type: string;
  open_destination: string | null;
  closed_destination_type: string;
  closed_destination: string | null;
  created_at: string;
  updated_at: string;
}

export interface OutboundRoutesTable {
  id: string;
  org_id: string;
  name: string;
  trunk_id: string;
  strip_digits: number;
  prepend_digits: string;
  caller_id_override: string | null;
  position: number;
  created_at: string;
  updated_at: string;
}

export interface OutboundRoutePatternsTable {
  id: string;
  route_id: string;
  pattern: string;
  position: number;
}

/** A webhook's row is the model's record (src/model/webhook-records.ts); the store numbers its events. */
export type WebhooksTable = Omit<WebhookRecord, "last_event_micros"> & {
  last_event_micros: Generated<number>;
};

/** The outbox's row is the model's delivery record (src/model/webhook-records.ts). */
export type WebhookDeliveriesTable = DeliveryRecord;

/** A role that runs on one replica at a time, held until `expires_at` unless renewed (2901). */
export interface LeasesTable {
  name: string;
  holder: string;
  acquired_at: string;
  expires_at: string;
  /** The lease's term: up by one each time it is taken rather than renewed in time (2961). */
  epoch: Generated<number>;
}

/** An on-request deploy queued for the deployer-lease holder (2962). */
export interface DeployJobsTable {
  id: string;
  kind: string;
  org_id: string | null;
  trigger: string | null;
  requested_by: string;
  requested_at: string;
  claimed_by: string | null;
  finished_at: string | null;
  outcome: string | null;
  /** The engine node whose deployer carries it out; null: the one implicit engine (2980). */
  node_id: string | null;
}

/** An org's saves (`seq` grows with each) and what the deployer has deployed of them (2901). */
export interface DeployRequestsTable {
  org_id: string;
  seq: number;
  /** The highest `seq` a successful deploy covered; pending while `seq` is above it. */
  done_seq: Generated<number>;
  /** The replica whose save bumped `seq` last. */
  requested_by: string;
  requested_at: string;
}

/**
 * What one engine node's deployer has deployed of an org's requests (2995): the org's
 * `deploy_requests.done_seq` is raised once every node holding the org (primary, standby) has.
 */
export interface NodeDeployRequestsTable {
  org_id: string;
  node_id: string;
  done_seq: number;
}

/**
 * A change of a realtime PJSIP row the engine has not taken yet (2950, PostgreSQL only): `kind`
 * endpoint, auth or aor (its cached object is to be expired) or registration (outbound
 * registrations to be reloaded). `seq` grows with every change of the object.
 */
export interface PjsipRealtimePendingTable {
  /**
   * The engine node owed the change (3020): every node holding the org is told on its own, so one
   * node's acknowledgement never hides the change from another. `''`: the one implicit engine.
   */
  node_id: string;
  kind: string;
  id: string;
  org_id: string;
  seq: number;
  queued_at: string;
}

/** What each engine node's Asterisk answered as its systemname at its last AMI connect (3021). */
export interface EngineNodeSystemsTable {
  node_id: string;
  /** `''`: the node has none. */
  system_name: string;
  seen_at: string;
}

/** Every table of the store. Later migrations add their tables here too. */
export interface Database extends TicketTables {
  organizations: OrganizationsTable;
  api_keys: ApiKeysTable;
  org_users: OrgUsersTable;
  extension_claims: ExtensionClaimsTable;
  users: UsersTable;
  queues: QueuesTable;
  queue_members: QueueMembersTable;
  ivrs: IvrsTable;
  ivr_options: IvrOptionsTable;
  dids: DidsTable;
  did_requests: DidRequestsTable;
  trunks: TrunksTable;
  time_conditions: TimeConditionsTable;
  outbound_routes: OutboundRoutesTable;
  outbound_route_patterns: OutboundRoutePatternsTable;
  call_records: CallRecordsTable;
  calls: CallsTable;
  call_events: CallEventsTable;
  idempotency_keys: IdempotencyKeysTable;
  login_throttle: LoginThrottleTable;
  sip_contacts: SipContactsTable;
  webhooks: WebhooksTable;
  webhook_deliveries: WebhookDeliveriesTable;
  leases: LeasesTable;
  deploy_requests: DeployRequestsTable;
  node_deploy_requests: NodeDeployRequestsTable;
  deploy_jobs: DeployJobsTable;
  crm_records: CrmRecordsTable;
  crm_fields: CrmFieldsTable;
  customer_tunnels: CustomerTunnelsTable;
  audit_log: AuditLogTable;
  audit_purge_gate: AuditPurgeGateTable;
  retention_policies: RetentionPoliciesTable;
  consent_records: ConsentRecordsTable;
  trunk_registrations: TrunkRegistrationsTable;
  pjsip_realtime_pending: PjsipRealtimePendingTable;
  engine_nodes: EngineNodesTable;
  engine_node_systems: EngineNodeSystemsTable;
  org_placements: OrgPlacementsTable;
  org_moves: OrgMovesTable;
  edge_requests: EdgeSyncRequestsTable;
  edge_applies: EdgeAppliesTable;
}

export type OrganizationRow = Selectable<OrganizationsTable>;
export type NewOrganizationRow = Insertable<OrganizationsTable>;
export type OrganizationUpdate = Updateable<OrganizationsTable>;
export type ApiKeyRow = Selectable<ApiKeysTable>;
export type OrgUserRow = Selectable<OrgUsersTable>;
export type UserRow = Selectable<UsersTable>;
export type QueueRow = Selectable<QueuesTable>;
export type QueueMemberRow = Selectable<QueueMembersTable>;
export type IvrRow = Selectable<IvrsTable>;
export type IvrOptionRow = Selectable<IvrOptionsTable>;
export type DidRow = Selectable<DidsTable>;
export type DidRequestRow = Selectable<DidRequestsTable>;
export type TrunkRow = Selectable<TrunksTable>;
export type TimeConditionRow = Selectable<TimeConditionsTable>;
export type OutboundRouteRow = Selectable<OutboundRoutesTable>;
