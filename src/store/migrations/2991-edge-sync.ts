// The SIP edge kept in step by `serve` (issue 26): what moved routing and has not reached the edge
// yet, and what the edge last took.
// - `edge_requests`: one row per scope, an org id (its config changed: DIDs, trunks, status) or
//   `nodes` (a node or a placement changed); a change bumps `seq` in its own transaction, the
//   edge-sync lease holder pushes and raises `done_seq` to the `seq` its push covered (as
//   deploy_requests, 2901), so a change survives a crash or a lease moving.
// - `edge_applies`: per edge directory, the revision of the tables last applied and read back,
//   and the last failure; `pbxctl status` compares it with what the store compiles to now.
import type { Kysely } from "kysely";
import { timeType } from "./portable.js";

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("edge_requests")
    .addColumn("scope", "varchar(64)", (c) => c.primaryKey())
    .addColumn("seq", "integer", (c) => c.notNull())
    .addColumn("done_seq", "integer", (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema
    .createTable("edge_applies")
    .addColumn("edge", "varchar(300)", (c) => c.primaryKey())
    // Null until a push was read back.
    .addColumn("revision", "varchar(64)")
    .addColumn("applied_at", timeType(db))
    // The last push's failure; null once a push succeeds.
    .addColumn("error", "text")
    .addColumn("attempted_at", timeType(db), (c) => c.notNull())
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable("edge_applies").execute();
  await db.schema.dropTable("edge_requests").execute();
}
