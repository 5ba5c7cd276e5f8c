// Platform users of orgs (people with a role), found by identity-provider subject or email.

import type { OrgUserRecord } from "../model/stored-records.js";
import type { Db } from "./database.js";
import { deleteOwned, updateOwned } from "./owned-rows.js";

/** Repository of platform users over a database or a transaction. */
export function createOrgUserRepository(db: Db) {
  return {
    async insert(row: OrgUserRecord): Promise<OrgUserRecord> {
      await db.insertInto("org_users").values(row).execute();
      return row;
    },

    async findById(orgId: string, id: string): Promise<OrgUserRecord | undefined> {
      return db
        .selectFrom("org_users")
        .selectAll()
        .where("org_id", "=", orgId)
        .where("id", "=", id)
        .executeTakeFirst();
    },

    async listByOrg(orgId: string): Promise<OrgUserRecord[]> {
      return db
        .selectFrom("org_users")
        .selectAll()
        .where("org_id", "=", orgId)
        .orderBy("email")
        .execute();
    },

    /** Every membership of a person: by subject when bound, else by email; oldest first. */
    async findMemberships(subject: string, email: string | null): Promise<OrgUserRecord[]> {
      return db
        .selectFrom("org_users")
        .selectAll()
        .where((eb) =>
          email
            ? eb.or([
                eb("subject", "=", subject),
                eb.and([eb("subject", "is", null), eb("email", "=", email)]),
              ])
            : eb("subject", "=", subject),
        )
        .orderBy("created_at")
        .orderBy("id")
        .execute();
    },

    async update(orgId: string, id: string, patch: Partial<OrgUserRecord>): Promise<void> {
      await updateOwned(db, "org_users", orgId, id, patch);
    },

    /** True when a row was deleted. */
    async delete(orgId: string, id: string): Promise<boolean> {
      return deleteOwned(db, "org_users", orgId, id);
    },
  };
}

export type OrgUserRepository = ReturnType<typeof createOrgUserRepository>;
