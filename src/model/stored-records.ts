// What the store keeps of an org, its platform users, the engine nodes, where each org is placed
// and its moves between nodes, as the domain works with it: one declaration each. The store's
// tables are these records (src/store/schema.ts derives them), and its repositories answer them,
// so no layer above the store names a table row.
import type { NodeState } from "./engine-node.js";
import type { MovePhase } from "./org-move.js";

/** An organization as stored, credentials already hashed or sealed. */
export interface OrganizationRecord {
  id: string;
  name: string;
  slug: string | null;
  type: string;
  status: string;
  context_prefix: string;
  /** 0/1. */
  recording_enabled: number;
  max_concurrent_calls: number;
  /** SHA-256 hex of the `org_` key: lookups are one indexed equality. */
  api_key_digest: string;
  /** AES-256-GCM of the `org_` key under the server key, so the admin can read it back. */
  api_key_encrypted: string;
  /** scrypt hash of the org secret. */
  api_secret_hash: string;
  /** `pending`, `approved`, `rejected` for orgs born from a request; null when an admin created it. */
  request_status: string | null;
  requested_by_email: string | null;
  decided_at: string | null;
  created_at: string;
  updated_at: string;
}

/** What the deploy side reads of an org (one cheap query over every org): no org is loaded. */
export type OrgHandleRecord = Pick<OrganizationRecord, "id" | "context_prefix" | "status">;

/** An Asterisk node the install deploys to (issue 25), its AMI secret sealed. */
export interface EngineNodeRecord {
  id: string;
  name: string;
  ami_host: string;
  ami_port: number;
  ami_username: string;
  ami_secret_sealed: string;
  sip_address: string;
  capacity: number;
  state: NodeState;
  created_at: string;
  updated_at: string;
}

/** Where an org lives: its primary node and its standby. */
export interface OrgPlacementRecord {
  org_id: string;
  node_id: string;
  standby_node_id: string | null;
  /** 0/1: an admin chose the node. */
  pinned: number;
  placed_at: string;
}

/** An org's latest move between engine nodes (migration 3000), as its driver records it. */
export interface OrgMoveRecord {
  org_id: string;
  id: string;
  source_node_id: string;
  target_node_id: string;
  phase: MovePhase;
  call_drain_timeout_s: number;
  requested_at: string;
  updated_at: string;
  /** The edge request (scope `nodes`) the placement switch recorded. */
  edge_seq: number | null;
  /** Phones told to re-register; null without an edge (or not yet). */
  phones_notified: number | null;
  drain_started_at: string | null;
  /** The org's calls still up on the source at the last look. */
  drain_calls: number | null;
  /** 0/1: the drain's deadline passed with calls up. */
  drain_timed_out: number;
  last_error: string | null;
  finished_at: string | null;
}

/** A person of an org (a platform user) as stored. */
export interface OrgUserRecord {
  id: string;
  org_id: string;
  /** Lower-cased. */
  email: string;
  /** The identity provider's `sub`, bound at first sign-in. */
  subject: string | null;
  name: string | null;
  role: string;
  status: string;
  created_at: string;
  updated_at: string;
}
