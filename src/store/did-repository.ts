// DIDs: the numbers of an org (OrgState shape) and the unassigned pool.
import { randomUUID } from "node:crypto";
import type { Did } from "../model/org-state.js";
import type { Db } from "./database.js";
import type { DidRow } from "./schema.js";

/** The OrgState DID a row describes. */
export function didFromRow(row: DidRow): Did {
  return {
    id: row.id,
    number: row.number,
    status: row.status as Did["status"],
    pool_status: row.pool_status as Did["pool_status"],
    is_default: row.is_default === 1,
    routing_type: row.routing_type as Did["routing_type"],
    routing_destination: row.routing_destination,
    routing_environment: row.routing_environment as Did["routing_environment"],
  };
}

/** Repository of DIDs over a database or a transaction. */
export function createDidRepository(db: Db) {
  return {
    /** Inserts a DID owned by `orgId` (null: the pool); returns it with its id. */
    async insert(orgId: string | null, did: Did): Promise<Did & { id: string }> {
      const id = did.id ?? randomUUID();
      const now = new Date().toISOString();
      await db
        .insertInto("dids")
        .values({
          id,
          org_id: orgId,
          number: did.number,
          status: did.status,
          pool_status: did.pool_status,
          is_default: did.is_default ? 1 : 0,
          routing_type: did.routing_type,
          routing_destination: did.routing_destination,
          routing_environment: did.routing_environment,
          created_at: now,
          updated_at: now,
        })
        .execute();
      return { ...did, id };
    },

    /** DIDs owned by the org ordered by number. */
    async listByOrg(orgId: string): Promise<Did[]> {
      const rows = await db
        .selectFrom("dids")
        .selectAll()
        .where("org_id", "=", orgId)
        .orderBy("number")
        .execute();
      return rows.map(didFromRow);
    },
  };
}

export type DidRepository = ReturnType<typeof createDidRepository>;
