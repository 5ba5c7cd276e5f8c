// DIDs: the numbers of an org (OrgState shape) and the unassigned pool.
import { randomUUID } from "node:crypto";
import { type Clock, systemClock } from "../clock.js";
import type { Did } from "../model/org-state.js";
import type { DidRecord } from "../model/routing-views.js";
import type { Db } from "./database.js";
import type { DidRow } from "./schema.js";

/** What a number released back to the pool is: no org, available, unrouted, nobody's default. */
export const RELEASED_TO_POOL = {
  org_id: null,
  pool_status: "available",
  is_default: 0,
  routing_type: null,
  routing_destination: null,
} as const;

/** The stored DID a row describes: its columns as the model's values. */
function didRecordFromRow(row: DidRow): DidRecord {
  return {
    id: row.id,
    number: row.number,
    org_id: row.org_id,
    pool_status: row.pool_status as DidRecord["pool_status"],
    status: row.status as DidRecord["status"],
    is_default: row.is_default === 1,
    routing_type: row.routing_type as DidRecord["routing_type"],
    routing_destination: row.routing_destination,
    routing_environment: row.routing_environment as DidRecord["routing_environment"],
    source: row.source as DidRecord["source"],
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

/** The OrgState DID a row describes (its keys in the order org files write them). */
export function didFromRow(row: DidRow): Did {
  const { id, number, status, pool_status, is_default, ...rest } = didRecordFromRow(row);
  const { routing_type, routing_destination, routing_environment, source } = rest;
  return {
    ...{ id, number, status, pool_status, is_default },
    ...{ routing_type, routing_destination, routing_environment },
    // `pool` is the default: left out, as org files leave it out.
    ...(source === "org" ? { source } : {}),
  };
}

/** The columns of a DID a use case may change (and the repository writes as given). */
export type DidColumns = Partial<Omit<DidRow, "id" | "created_at" | "updated_at">>;

/** Repository of DIDs over a database or a transaction. */
export function createDidRepository(db: Db, clock: Clock = systemClock) {
  const ownedByOrg = (orgId: string) =>
    db.selectFrom("dids").selectAll().where("org_id", "=", orgId).orderBy("number").execute();

  return {
    /** Inserts a DID owned by `orgId` (null: the pool); returns it with its id. */
    async insert(orgId: string | null, did: Did): Promise<Did & { id: string }> {
      const id = did.id ?? randomUUID();
      const now = clock().toISOString();
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
          source: did.source ?? "pool",
          created_at: now,
          updated_at: now,
        })
        .execute();
      return { ...did, id };
    },

    /** Deletes DID `id` (an org's own number it gives up; pool numbers are released instead). */
    async delete(id: string): Promise<void> {
      await db.deleteFrom("dids").where("id", "=", id).execute();
    },

    /** DID `id`, whoever owns it (callers check the owner). */
    async findById(id: string): Promise<DidRecord | undefined> {
      const row = await db.selectFrom("dids").selectAll().where("id", "=", id).executeTakeFirst();
      return row && didRecordFromRow(row);
    },

    /** The first stored DID written in any of `forms` (the ways of writing one number). */
    async findByNumberForms(forms: readonly string[]): Promise<DidRecord | undefined> {
      if (forms.length === 0) return undefined;
      const row = await db
        .selectFrom("dids")
        .selectAll()
        .where("number", "in", [...forms])
        .orderBy("number")
        .executeTakeFirst();
      return row && didRecordFromRow(row);
    },

    /** The org's stored DIDs ordered by number. */
    async listRecordsByOrg(orgId: string): Promise<DidRecord[]> {
      return (await ownedByOrg(orgId)).map(didRecordFromRow);
    },

    /** Unassigned DIDs (no org), optionally with one pool status, ordered by number. */
    async listUnassigned(poolStatus?: string): Promise<DidRecord[]> {
      let query = db.selectFrom("dids").selectAll().where("org_id", "is", null);
      if (poolStatus !== undefined) query = query.where("pool_status", "=", poolStatus);
      return (await query.orderBy("number").execute()).map(didRecordFromRow);
    },

    /** Every DID, optionally with one pool status, ordered by number. */
    async listAll(poolStatus?: string): Promise<DidRecord[]> {
      let query = db.selectFrom("dids").selectAll();
      if (poolStatus !== undefined) query = query.where("pool_status", "=", poolStatus);
      return (await query.orderBy("number").execute()).map(didRecordFromRow);
    },

    /** Writes the given columns of DID `id` (and its updated_at). */
    async update(id: string, patch: DidColumns, now: string): Promise<void> {
      await db
        .updateTable("dids")
        .set({ ...patch, updated_at: now })
        .where("id", "=", id)
        .execute();
    },

    /** Clears is_default on every DID of the org except `keepId`. */
    async clearDefaults(orgId: string, now: string, keepId?: string): Promise<void> {
      let query = db
        .updateTable("dids")
        .set({ is_default: 0, updated_at: now })
        .where("org_id", "=", orgId)
        .where("is_default", "=", 1);
      if (keepId !== undefined) query = query.where("id", "!=", keepId);
      await query.execute();
    },

    /** DIDs owned by the org ordered by number. */
    async listByOrg(orgId: string): Promise<Did[]> {
      return (await ownedByOrg(orgId)).map(didFromRow);
    },
  };
}

export type DidRepository = ReturnType<typeof createDidRepository>;
