// Stored answers of requests sent with an `Idempotency-Key` (migration 2001), per org.
import type { Db } from "./database.js";

export interface IdempotencyKeysTable {
  org_id: string;
  key: string;
  operation: string;
  request_hash: string;
  status: number | null;
  response: string | null;
  created_at: string;
}

export interface StoredIdempotentRequest {
  operation: string;
  requestHash: string;
  /** Null while the first request with this key is still running. */
  answer: { status: number; body: unknown } | null;
}

/**
 * Claims the key for a new request; false when the org used it since `expiredBefore` (an older
 * use has expired and is replaced).
 */
export async function claimIdempotencyKey(
  db: Db,
  row: {
    orgId: string;
    key: string;
    operation: string;
    requestHash: string;
    now: string;
    expiredBefore: string;
  },
): Promise<boolean> {
  await db
    .deleteFrom("idempotency_keys")
    .where("org_id", "=", row.orgId)
    .where("key", "=", row.key)
    .where("created_at", "<", row.expiredBefore)
    .execute();
  const result = await db
    .insertInto("idempotency_keys")
    .values({
      org_id: row.orgId,
      key: row.key,
      operation: row.operation,
      request_hash: row.requestHash,
      status: null,
      response: null,
      created_at: row.now,
    })
    .onConflict((oc) => oc.columns(["org_id", "key"]).doNothing())
    .executeTakeFirst();
  return Number(result.numInsertedOrUpdatedRows ?? 0) > 0;
}

/** What the org's earlier request with this key was and answered. */
export async function findIdempotentRequest(
  db: Db,
  orgId: string,
  key: string,
): Promise<StoredIdempotentRequest | null> {
  const row = await db
    .selectFrom("idempotency_keys")
    .select(["operation", "request_hash", "status", "response"])
    .where("org_id", "=", orgId)
    .where("key", "=", key)
    .executeTakeFirst();
  if (!row) return null;
  return {
    operation: row.operation,
    requestHash: row.request_hash,
    answer:
      row.status === null ? null : { status: row.status, body: JSON.parse(row.response ?? "null") },
  };
}

/** Records the answer of the request that claimed the key. */
export async function storeIdempotentAnswer(
  db: Db,
  orgId: string,
  key: string,
  answer: { status: number; body: unknown },
): Promise<void> {
  await db
    .updateTable("idempotency_keys")
    .set({ status: answer.status, response: JSON.stringify(answer.body) })
    .where("org_id", "=", orgId)
    .where("key", "=", key)
    .execute();
}

/** Deletes every org's keys claimed before `expiredBefore`; answers how many. */
export async function deleteExpiredIdempotencyKeys(db: Db, expiredBefore: string): Promise<number> {
  const result = await db
    .deleteFrom("idempotency_keys")
    .where("created_at", "<", expiredBefore)
    .executeTakeFirst();
  return Number(result.numDeletedRows ?? 0);
}

/** Gives the key back (the request failed before placing a call): a retry may use it. */
export async function releaseIdempotencyKey(db: Db, orgId: string, key: string): Promise<void> {
  await db
    .deleteFrom("idempotency_keys")
    .where("org_id", "=", orgId)
    .where("key", "=", key)
    .where("status", "is", null)
    .execute();
}
