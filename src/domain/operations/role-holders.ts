// Who does what across the replicas (issue 23's roles, issue 25's nodes), for admins only.
// `/health` needs no authentication, so it says only the kind of each role its replica holds
// (`deployer`, `call-ingest`, ...); the lease names behind them carry an engine's AMI address or a
// node's id, which are the platform's internals. This is where an operator sees them: every lease
// in the store, whichever replica holds it, with the node's name beside a node's lease.
import type { Clock } from "../../clock.js";
import type { RoleHolderView } from "../../model/replica-views.js";
import type { Db } from "../../store/database.js";
import { listEngineNodes } from "../../store/engine-node-repository.js";
import { createLeaseRepository } from "../../store/lease-repository.js";

/** A role's kind: its lease name up to the first `:` (`deployer:node:<id>` -> `deployer`). */
export function roleKind(leaseName: string): string {
  const colon = leaseName.indexOf(":");
  return colon === -1 ? leaseName : leaseName.slice(0, colon);
}

/** The kinds of `leaseNames`, each once, in their first order: what `/health` may say. */
export function roleKinds(leaseNames: readonly string[]): string[] {
  return [...new Set(leaseNames.map(roleKind))];
}

/** One role's lease as admins see it (`GET /admin/replica-roles`). */
export type { RoleHolderView };

const NODE_LEASE = /^[a-z-]+:node:(.+)$/;

function engineOf(leaseName: string, nodeNames: ReadonlyMap<string, string>): string | null {
  const node = NODE_LEASE.exec(leaseName);
  if (node) return nodeNames.get(node[1]!) ?? node[1]!;
  const colon = leaseName.indexOf(":");
  return colon === -1 ? null : leaseName.slice(colon + 1);
}

/** Every role's lease in the store, by lease name (released and expired ones included). */
export async function listRoleHolders(deps: { db: Db; clock: Clock }): Promise<RoleHolderView[]> {
  const nodeNames = new Map((await listEngineNodes(deps.db)).map((n) => [n.id, n.name]));
  const now = deps.clock().toISOString();
  const leases = await createLeaseRepository(deps.db).list();
  return leases.map((lease) => ({
    lease: lease.name,
    role: roleKind(lease.name),
    engine: engineOf(lease.name, nodeNames),
    holder: lease.holder,
    acquired_at: lease.acquired_at,
    expires_at: lease.expires_at,
    held: lease.expires_at > now,
  }));
}
