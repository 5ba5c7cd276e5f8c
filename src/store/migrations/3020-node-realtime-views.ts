// Per-node realtime PJSIP (issue 25, docs/nodes.md): each engine node reads the `ps_*` rows of
// the orgs it holds only, through views in a schema of its own (src/store/node-realtime-views.ts),
// and the changes each node's engine is owed are kept per node. PostgreSQL only, like 2950.
//
// `pjsip_realtime_pending` gains `node_id` (`''`: the one implicit engine, which every row
// queued before had): two nodes holding an org (primary and standby, or a move's two sides) each
// expire its changed objects, and one's acknowledgement no longer forgets the other's debt.
// The views of the nodes that exist are created here; later nodes get theirs with their row.
// They are derived objects, created through the store's one definition of them (not spelled out
// here): recreating them never loses data.
import { type Kysely, sql } from "kysely";
import type { Db } from "../database.js";
import { storeDialect } from "../dialect.js";
import { dropNodeRealtimeViews, ensureNodeRealtimeViews } from "../node-realtime-views.js";

// biome-ignore lint/suspicious/noExplicitAny: migrations take whatever handle Kysely gives them
export async function up(db: Kysely<any>): Promise<void> {
  if (storeDialect(db) !== "postgres") return;
  await db.schema
    .alterTable("pjsip_realtime_pending")
    .addColumn("node_id", "varchar(36)", (c) => c.notNull().defaultTo(""))
    .execute();
  await sql`alter table pjsip_realtime_pending drop constraint pjsip_realtime_pending_pk`.execute(
    db,
  );
  await db.schema
    .alterTable("pjsip_realtime_pending")
    .addPrimaryKeyConstraint("pjsip_realtime_pending_pk", ["node_id", "kind", "id"])
    .execute();
  const nodes = await db.selectFrom("engine_nodes").select(["id", "name"]).execute();
  for (const node of nodes) await ensureNodeRealtimeViews(db as Db, node);
}

// biome-ignore lint/suspicious/noExplicitAny: see up
export async function down(db: Kysely<any>): Promise<void> {
  if (storeDialect(db) !== "postgres") return;
  const nodes = await db.selectFrom("engine_nodes").select(["name"]).execute();
  for (const node of nodes) await dropNodeRealtimeViews(db as Db, node.name);
  await sql`delete from pjsip_realtime_pending where node_id <> ''`.execute(db);
  await sql`alter table pjsip_realtime_pending drop constraint pjsip_realtime_pending_pk`.execute(
    db,
  );
  await db.schema.alterTable("pjsip_realtime_pending").dropColumn("node_id").execute();
  await db.schema
    .alterTable("pjsip_realtime_pending")
    .addPrimaryKeyConstraint("pjsip_realtime_pending_pk", ["kind", "id"])
    .execute();
}
