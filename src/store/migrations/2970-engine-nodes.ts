// Engine nodes and placement (issue 25): the Asterisk nodes an install deploys to, and the node
// each org lives on. With no node row the install has one implicit engine (PBX_AMI_*) and no
// placement rows, as before this migration; once a node exists every org has exactly one
// placement row (its primary node, optionally a standby), kept by src/domain/nodes/placement.ts.
// The AMI secret is sealed (AES-256-GCM under the server key, like trunk passwords in org keys)
// and never read back by the API.
import type { Kysely } from "kysely";
import { timeType } from "./portable.js";

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("engine_nodes")
    .addColumn("id", "varchar(36)", (c) => c.primaryKey())
    .addColumn("name", "varchar(63)", (c) => c.notNull().unique())
    .addColumn("ami_host", "varchar(253)", (c) => c.notNull())
    .addColumn("ami_port", "integer", (c) => c.notNull())
    .addColumn("ami_username", "varchar(64)", (c) => c.notNull())
    .addColumn("ami_secret_sealed", "text", (c) => c.notNull())
    // host[:port] the SIP edge forwards the node's orgs' traffic to.
    .addColumn("sip_address", "varchar(262)", (c) => c.notNull())
    // How many orgs (as primary) the node takes.
    .addColumn("capacity", "integer", (c) => c.notNull())
    // `active`, `draining` (keeps its orgs, takes no new one) or `down`.
    .addColumn("state", "varchar(16)", (c) => c.notNull())
    .addColumn("created_at", timeType(db), (c) => c.notNull())
    .addColumn("updated_at", timeType(db), (c) => c.notNull())
    .execute();
  await db.schema
    .createTable("org_placements")
    .addColumn("org_id", "varchar(36)", (c) =>
      c.primaryKey().references("organizations.id").onDelete("cascade"),
    )
    // A node holding orgs cannot be deleted (the domain says so first; the key makes it sure).
    .addColumn("node_id", "varchar(36)", (c) => c.notNull().references("engine_nodes.id"))
    .addColumn("standby_node_id", "varchar(36)", (c) => c.references("engine_nodes.id"))
    // 1 when an admin chose the node, 0 when placement did.
    .addColumn("pinned", "integer", (c) => c.notNull())
    .addColumn("placed_at", timeType(db), (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex("org_placements_node")
    .on("org_placements")
    .column("node_id")
    .execute();
  await db.schema
    .createIndex("org_placements_standby")
    .on("org_placements")
    .column("standby_node_id")
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable("org_placements").execute();
  await db.schema.dropTable("engine_nodes").execute();
}
