// `org move` (issue 25, docs/nodes.md): a move of an org from one engine node to another is a
// state in the store, driven step by step by the holder of the `org-moves` lease
// (src/domain/nodes/org-move-driver.ts), so a replica that dies mid-move leaves it to the next holder,
// which resumes at the recorded phase. One row per org: its latest move (a new move of the org
// replaces a finished one). While a move is unfinished its target node holds the org's config,
// and so does its source until the phase `removing` (src/store/engine-node-repository.ts).
import type { Kysely } from "kysely";
import { timeType } from "./portable.js";

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("org_moves")
    .addColumn("org_id", "varchar(36)", (c) => c.primaryKey())
    .addColumn("id", "varchar(36)", (c) => c.notNull())
    .addColumn("source_node_id", "varchar(36)", (c) => c.notNull())
    .addColumn("target_node_id", "varchar(36)", (c) => c.notNull())
    // deploying | switching | re-registering | draining | removing | done
    .addColumn("phase", "varchar(20)", (c) => c.notNull())
    .addColumn("call_drain_timeout_s", "integer", (c) => c.notNull())
    .addColumn("requested_at", timeType(db), (c) => c.notNull())
    .addColumn("updated_at", timeType(db), (c) => c.notNull())
    // The edge request (scope `nodes`) the placement switch recorded; re-registering waits for
    // the edge to have taken it.
    .addColumn("edge_seq", "integer")
    // Phones told to re-register (NOTIFY check-sync); null without an edge.
    .addColumn("phones_notified", "integer")
    .addColumn("drain_started_at", timeType(db))
    // The org's calls still up on the source at the last look.
    .addColumn("drain_calls", "integer")
    .addColumn("drain_timed_out", "integer", (c) => c.notNull().defaultTo(0))
    .addColumn("last_error", "text")
    .addColumn("finished_at", timeType(db))
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable("org_moves").execute();
}
