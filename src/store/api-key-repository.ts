// Per-org `ak_` API keys, stored as digests. The repository answers and takes the model's ApiKey:
// the permissions' JSON text stays here.
import type { ApiKey } from "../model/access-views.js";
import type { Db } from "./database.js";
import type { ApiKeyRow } from "./schema.js";

function apiKeyOf(row: ApiKeyRow): ApiKey {
  const { permissions, ...key } = row;
  return { ...key, permissions: JSON.parse(permissions) as ApiKey["permissions"] };
}

/** Repository of API keys over a database or a transaction. */
export function createApiKeyRepository(db: Db) {
  return {
    async insert(key: ApiKey): Promise<ApiKey> {
      await db
        .insertInto("api_keys")
        .values({ ...key, permissions: JSON.stringify(key.permissions) })
        .execute();
      return key;
    },

    async findByDigest(digest: string): Promise<ApiKey | undefined> {
      const row = await db
        .selectFrom("api_keys")
        .selectAll()
        .where("key_digest", "=", digest)
        .executeTakeFirst();
      return row && apiKeyOf(row);
    },

    async findById(orgId: string, id: string): Promise<ApiKey | undefined> {
      const row = await db
        .selectFrom("api_keys")
        .selectAll()
        .where("org_id", "=", orgId)
        .where("id", "=", id)
        .executeTakeFirst();
      return row && apiKeyOf(row);
    },

    async listByOrg(orgId: string): Promise<ApiKey[]> {
      const rows = await db
        .selectFrom("api_keys")
        .selectAll()
        .where("org_id", "=", orgId)
        .orderBy("created_at")
        .orderBy("id")
        .execute();
      return rows.map(apiKeyOf);
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
