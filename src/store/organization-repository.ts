// Organizations: rows in, rows out. Credentials arrive already hashed/encrypted.
import type { Db } from "./database.js";
import type { NewOrganizationRow, OrganizationRow, OrganizationUpdate } from "./schema.js";

/** Repository of organizations over a database or a transaction. */
export function createOrganizationRepository(db: Db) {
  return {
    async insert(row: NewOrganizationRow): Promise<OrganizationRow> {
      await db.insertInto("organizations").values(row).execute();
      return row as OrganizationRow;
    },

    async findById(id: string): Promise<OrganizationRow | undefined> {
      return db.selectFrom("organizations").selectAll().where("id", "=", id).executeTakeFirst();
    },

    async findByKeyDigest(digest: string): Promise<OrganizationRow | undefined> {
      return db
        .selectFrom("organizations")
        .selectAll()
        .where("api_key_digest", "=", digest)
        .executeTakeFirst();
    },

    /** Orgs by creation time, optionally only those with one request status. */
    async list(filter: { requestStatus?: string } = {}): Promise<OrganizationRow[]> {
      let query = db.selectFrom("organizations").selectAll();
      if (filter.requestStatus) query = query.where("request_status", "=", filter.requestStatus);
      return query.orderBy("created_at").orderBy("id").execute();
    },

    /** Orgs whose request was filed by this person (lower-cased email). */
    async listRequestedBy(email: string): Promise<OrganizationRow[]> {
      return db
        .selectFrom("organizations")
        .selectAll()
        .where("requested_by_email", "=", email)
        .orderBy("created_at")
        .orderBy("id")
        .execute();
    },

    async update(id: string, patch: OrganizationUpdate): Promise<void> {
      await db.updateTable("organizations").set(patch).where("id", "=", id).execute();
    },
  };
}

export type OrganizationRepository = ReturnType<typeof createOrganizationRepository>;
