// Which engine node carried a call (issue 25): each node's events are ingested by that node's
// consumer, which stamps the call records and calls it stores with the node's id. Null for the
// one implicit engine of an install with no node, and for everything stored before this
// migration. Platform detail: never shown to the org.
import type { Kysely } from "kysely";

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable("call_records").addColumn("node_id", "varchar(36)").execute();
  await db.schema.alterTable("calls").addColumn("node_id", "varchar(36)").execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable("calls").dropColumn("node_id").execute();
  await db.schema.alterTable("call_records").dropColumn("node_id").execute();
}
