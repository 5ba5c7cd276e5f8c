// Orgs' requests for numbers of the DID pool, with the number they ask for.
import type { Db } from "./database.js";
import type { DidRequestRow } from "./schema.js";

export type DidRequestStatus = "pending" | "approved" | "rejected";

/** A request row joined with its DID's number. */
export interface DidRequestWithNumber extends DidRequestRow {
  number: string;
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
    async findById(id: string): Promise<DidRequestWithNumber | undefined> {
      return withNumber().where("did_requests.id", "=", id).executeTakeFirst();
    },

    /** Requests, oldest first; filtered by status and/or org when given. */
    async list(
      filter: { status?: DidRequestStatus; orgId?: string } = {},
    ): Promise<DidRequestWithNumber[]> {
      let query = withNumber();
      if (filter.status !== undefined)
        query = query.where("did_requests.status", "=", filter.status);
      if (filter.orgId !== undefined) query = query.where("did_requests.org_id", "=", filter.orgId);
      return query.orderBy("did_requests.created_at").orderBy("did_requests.id").execute();
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
