// One `systemname` per engine node (issue 25, docs/nodes.md): what each node's Asterisk answered
// to `CoreSettings` at its last AMI connect, so every replica (and `pbxctl status`, which has no
// AMI session) sees the same picture: a node with no systemname among several, or one sharing
// another node's, hands out unique ids that collide in the shared call store. Its own table, not
// columns of engine_nodes: it changes when an engine reconnects, which must not look like an
// admin's change of the node (engine_nodes.updated_at drives the deployers' topology).
import type { Kysely } from "kysely";
import { timeType } from "./portable.js";

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("engine_node_systems")
    .addColumn("node_id", "varchar(36)", (c) =>
      c.primaryKey().references("engine_nodes.id").onDelete("cascade"),
    )
    // As Asterisk answered it; '' when it has none.
    .addColumn("system_name", "varchar(200)", (c) => c.notNull())
    .addColumn("seen_at", timeType(db), (c) => c.notNull())
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable("engine_node_systems").execute();
}
