// Per-node realtime PJSIP (issue 25, docs/nodes.md "Realtime PJSIP with several nodes"): the
// `ps_*` tables hold every org's rows, and each engine node's Asterisk reads them through views
// in a schema of its own (`pbx_node_<name>`, src/model/node-realtime.ts) that show only the rows
// of the orgs the node holds: as primary, standby, or a side of an unfinished move (`holdsOrg`,
// the one rule the node's files follow too). So a node never answers a REGISTER of an org placed
// elsewhere, and a placement change (a pin, a move's switch and removal) changes what each node
// sees in the transaction that makes it.
//
// res_config_pgsql reads a table's columns from the catalog, where a view is a relation like any
// other, and splits `schema.table` itself (res/res_config_pgsql.c, find_table); it never quotes,
// hence names that need no quoting. A view's `*` is fixed when it is created, so whatever adds a
// column to a `ps_*` table must call `ensureNodeRealtimeViews` for every node again (as the
// deployer's start-up pass of each node does).
import { sql } from "kysely";
import { nodeRealtimeSchema } from "../model/node-realtime.js";
import type { Db } from "./database.js";
import { storeDialect } from "./dialect.js";
import { holdsOrg } from "./engine-node-repository.js";
import { PJSIP_REALTIME_TABLES } from "./pjsip-realtime-repository.js";

/** A node id is written into the views' text: only the shape pbxctl gives ids. */
const NODE_ID = /^[A-Za-z0-9-]{1,36}$/;

/** Creates or replaces node `node`'s schema and views (PostgreSQL; nothing on SQLite). */
export async function ensureNodeRealtimeViews(
  db: Db,
  node: { id: string; name: string },
): Promise<void> {
  if (storeDialect(db) !== "postgres") return;
  if (!NODE_ID.test(node.id)) throw new Error(`not an engine node id: ${node.id}`);
  const schema = sql.id(nodeRealtimeSchema(node.name));
  await sql`create schema if not exists ${schema}`.execute(db);
  for (const table of PJSIP_REALTIME_TABLES) {
    // A row belongs to the org whose context prefix starts its id (the compiler names every
    // object `<prefix>...`); C collation, as the rows' ids.
    await sql`create or replace view ${schema}.${sql.id(table)} as
      select t.* from ${sql.table(table)} t
      where exists (
        select 1 from organizations
        join org_placements on org_placements.org_id = organizations.id
        where starts_with(t.id, organizations.context_prefix collate "C")
          and ${holdsOrg(node.id, { inline: true })})`.execute(db);
  }
}

/** Renames node `from`'s schema with the node (its views go with it). */
export async function renameNodeRealtimeViews(db: Db, from: string, to: string): Promise<void> {
  if (storeDialect(db) !== "postgres" || from === to) return;
  await sql`alter schema ${sql.id(nodeRealtimeSchema(from))}
    rename to ${sql.id(nodeRealtimeSchema(to))}`.execute(db);
}

/** Drops node `name`'s schema and views. */
export async function dropNodeRealtimeViews(db: Db, name: string): Promise<void> {
  if (storeDialect(db) !== "postgres") return;
  await sql`drop schema if exists ${sql.id(nodeRealtimeSchema(name))} cascade`.execute(db);
}
