// Per-org `ak_` API keys, stored as digests.
import type { Db } from "./database.js";
import type { ApiKeyRow } from "./schema.js";

/** Repository of API keys over a database or a transaction. */
export function createApiKeyRepository(db: Db) {
  return {
    async insert(row: ApiKeyRow): Promise<ApiKeyRow> {
      await db.insertInto("api_keys").values(row).execute();
      return row;
    },

    async findByDigest(digest: string): Promise<ApiKeyRow | undefined> {
      return db
        .selectFrom("api_keys")
        .selectAll()
        .where("key_digest", "=", digest)
        .executeTakeFirst();
    },

    async findById(orgId: string, id: string): Promise<ApiKeyRow | undefined> {
      return db
        .selectFrom("api_keys")
        .selectAll()
        .where("org_id", "=", orgId)
        .where("id", "=", id)
        .executeTakeFirst();
    },

    async listByOrg(orgId: string): Promise<ApiKeyRow[]> {
      return db
        .selectFrom("api_keys")
        .selectAll()
        .where("org_id", "=", orgId)
        .orderBy("created_at")
        .orderBy("id")
        .execute();
    },

    /** Marks the key revoked; true when a key of this org was found. */
    async revoke(orgId: string, id: string, at: string): Promise<boolean> {
      const result = await db
        .updateTable("api_keys")
        .set({ revoked_at: at })
        .where("org_id", "=", orgId)
        .where("id", "=", id)
        .where("revoked_at", "is", null)
        .executeTakeFirst();
      return Number(result.numUpdatedRows) > 0;
    },
  };
}

export type ApiKeyRepository = ReturnType<typeof createApiKeyRepository>;
