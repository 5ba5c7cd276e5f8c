// One writer of an org's configuration at a time. SQLite gets this for free: its one connection
// runs one transaction at a time. PostgreSQL runs transactions side by side (READ COMMITTED), so
// two saves of one org could both read the old state, then collide on a unique index (two IVR
// menu replacements inserting the same digits, two "set default DID" clearing each other's
// default) and answer 500. A transaction-scoped advisory lock on the org restores the SQLite
// behaviour: the second save waits for the first to commit and then sees its result.
import { sql } from "kysely";
import type { Db } from "./database.js";
import { storeDialect } from "./dialect.js";

/**
 * The advisory-lock class of org writes (the first of PostgreSQL's two 32-bit lock keys): other
 * advisory locks of the store must use other classes so they never wait on these.
 */
export const ORG_WRITE_LOCK_CLASS = 2301;

/** Waits until no other transaction writes `orgId`'s configuration; held until `trx` ends. */
export async function lockOrgForWrite(trx: Db, orgId: string): Promise<void> {
  if (storeDialect(trx) !== "postgres") return;
  await sql`select pg_advisory_xact_lock(${ORG_WRITE_LOCK_CLASS}, hashtext(${orgId}))`.execute(trx);
}
