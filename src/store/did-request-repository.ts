// Orgs' requests for numbers of the DID pool, with the number they ask for.
import type { DidRequestStatus, DidRequestView } from "../model/routing-views.js";
import type { Db } from "./database.js";
import type { DidRequestRow } from "./schema.js";

/** A stored request with the number it asks for (the API shows it whole). */
export type DidRequestRecord = DidRequestView;

/** The record of a request row joined with its DID's number. */
function requestFromRow(row: DidRequestRow & { number: string }): DidRequestRecord {
  return {
    id: row.id,
    did_id: row.did_id,
    number: row.number,
    org_id: row.org_id,
    status: row.status as DidRequestStatus,
    requested_by: row.requested_by,
    created_at: row.created_at,
    decided_at: row.decided_at,
  };
}

/** Repository of DID requests over a database or a transaction. */
export function createDidRequestRepository(db: Db) {
  const withNumber = () =>
    db
      .selectFrom("did_requests")
      .innerJoin("dids", "dids.id", "did_requests.did_id")
      .selectAll("did_requests")
      .select("dids.number as number");

  return {
    /** Inserts a request row as given. */
    async insert(row: DidRequestRow): Promise<void> {
      await db.insertInto("did_requests").values(row).execute();
    },

    /** The request `id` with its number, whoever made it. */
    async findById(id: string): Promise<DidRequestRecord | undefined> {
      const row = await withNumber().where("did_requests.id", "=", id).executeTakeFirst();
      return row && requestFromRow(row);
    },

    /** Requests, oldest first; filtered by status and/or org when given. */
    async list(
      filter: { status?: DidRequestStatus; orgId?: string } = {},
    ): Promise<DidRequestRecord[]> {
      let query = withNumber();
      if (filter.status !== undefined)
        query = query.where("did_requests.status", "=", filter.status);
      if (filter.orgId !== undefined) query = query.where("did_requests.org_id", "=", filter.orgId);
      const rows = await query
        .orderBy("did_requests.created_at")
        .orderBy("did_requests.id")
        .execute();
      return rows.map(requestFromRow);
    },

    /** Records the decision on a pending request; false when it was no longer pending. */
    async decide(id: string, status: "approved" | "rejected", now: string): Promise<boolean> {
      const result = await db
        .updateTable("did_requests")
        .set({ status, decided_at: now })
        .where("id", "=", id)
        .where("status", "=", "pending")
        .executeTakeFirst();
      return Number(result.numUpdatedRows) === 1;
    },
  };
}

export type DidRequestRepository = ReturnType<typeof createDidRequestRepository>;
