// Customer tunnels (issue 16): WireGuard tunnels from the gateway to customer sites. Private
// keys and the preshared key are stored sealed (AES-256-GCM under the server key); an interface
// name and a listen port belong to one tunnel of the gateway; an org has at most one staging
// tunnel (the one its staging DIDs are dialled over).
import { type Kysely, sql } from "kysely";
import { timeType } from "./portable.js";

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("customer_tunnels")
    .addColumn("id", "varchar(36)", (c) => c.primaryKey())
    .addColumn("org_id", "varchar(36)", (c) =>
      c.notNull().references("organizations.id").onDelete("cascade"),
    )
    .addColumn("name", "varchar(100)", (c) => c.notNull())
    .addColumn("interface", "varchar(15)", (c) => c.notNull().unique())
    .addColumn("listen_port", "integer", (c) => c.notNull().unique())
    .addColumn("gateway_address", "varchar(50)", (c) => c.notNull())
    .addColumn("customer_address", "varchar(50)", (c) => c.notNull())
    .addColumn("gateway_endpoint", "varchar(260)", (c) => c.notNull())
    .addColumn("customer_endpoint", "varchar(260)")
    // JSON array of CIDR ranges behind the customer's end.
    .addColumn("customer_networks", "text", (c) => c.notNull())
    .addColumn("keepalive", "integer", (c) => c.notNull())
    .addColumn("staging", "integer", (c) => c.notNull())
    .addColumn("staging_sip_port", "integer", (c) => c.notNull())
    .addColumn("gateway_public_key", "varchar(44)", (c) => c.notNull())
    .addColumn("customer_public_key", "varchar(44)", (c) => c.notNull())
    .addColumn("gateway_private_key", "text", (c) => c.notNull())
    .addColumn("customer_private_key", "text", (c) => c.notNull())
    .addColumn("preshared_key", "text", (c) => c.notNull())
    .addColumn("created_at", timeType(db), (c) => c.notNull())
    .addColumn("updated_at", timeType(db), (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex("customer_tunnels_org_created")
    .on("customer_tunnels")
    .columns(["org_id", "created_at", "id"])
    .execute();
  await sql`CREATE UNIQUE INDEX customer_tunnels_one_staging ON customer_tunnels (org_id) WHERE staging = 1`.execute(
    db,
  );
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable("customer_tunnels").execute();
}
