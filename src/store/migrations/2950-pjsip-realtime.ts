// Realtime PJSIP (issue 24): Asterisk's sorcery realtime tables, which the deployer fills with the
// compiler's rows when PBX_PJSIP=realtime, and the expirations it still owes the engine.
// PostgreSQL only: Asterisk reads these tables itself (res_config_pgsql), which it cannot do in
// an SQLite file, and realtime mode refuses to start without PBX_DATABASE_URL. They are a
// migration rather than something the mode creates when it starts: migrations are the one way
// the schema changes (under Kysely's lock, so replicas starting together agree; `serve
// --no-migrate` stays true), and turning the mode on later needs no schema step. In file mode
// they stay empty.
//
// Names and columns are Asterisk's (contrib/ast-db-manage); every column is text of any length
// (Asterisk's `context VARCHAR(40)` is too short for `org_<uuid>_internal`). Ids are C-collated
// so an org's rows, whose ids all start with its context prefix, are one range of the primary
// key whatever the database's collation. Spelled out here, not taken from the compiler's
// REALTIME_COLUMNS: a shipped migration never changes; a new column is a new migration.
import { type Kysely, sql } from "kysely";
import { storeDialect } from "../dialect.js";

const TABLES: Record<string, readonly string[]> = {
  ps_endpoints: [
    "context",
    "disallow",
    "allow",
    "auth",
    "aors",
    "accountcode",
    "callerid",
    "set_var",
    "direct_media",
    "rtp_symmetric",
    "force_rport",
    "rewrite_contact",
    "moh_suggest",
    "outbound_auth",
    "from_user",
    "mailboxes",
  ],
  ps_auths: ["auth_type", "username", "realm", "password", "password_digest"],
  ps_aors: ["max_contacts", "remove_existing", "contact"],
  ps_endpoint_id_ips: ["endpoint", "match"],
  ps_registrations: [
    "server_uri",
    "client_uri",
    "contact_user",
    "retry_interval",
    "expiration",
    "endpoint",
    "line",
    "outbound_auth",
  ],
};

// biome-ignore lint/suspicious/noExplicitAny: migrations take whatever handle Kysely gives them
export async function up(db: Kysely<any>): Promise<void> {
  if (storeDialect(db) !== "postgres") return;
  for (const [table, columns] of Object.entries(TABLES)) {
    let create = db.schema
      .createTable(table)
      .addColumn("id", sql`text collate "C"`, (c) => c.primaryKey());
    for (const column of columns) create = create.addColumn(column, "text");
    await create.execute();
  }
  // What the engine has not been told yet: one row per cached object whose row changed (`kind`
  // endpoint, auth or aor: expire it; registration: reload outbound registrations). Written in
  // the transaction that changes the rows, deleted once the engine took the change, so an engine
  // that is down, or a deployer that dies, leaves the debt here for the next one.
  await db.schema
    .createTable("pjsip_realtime_pending")
    .addColumn("kind", "varchar(20)", (c) => c.notNull())
    .addColumn("id", sql`text collate "C"`, (c) => c.notNull())
    .addColumn("org_id", "varchar(36)", (c) => c.notNull())
    // Bumped by every change of the object: the engine's acknowledgement deletes the row only
    // if no newer change came in meanwhile.
    .addColumn("seq", "bigint", (c) => c.notNull())
    .addColumn("queued_at", "timestamptz", (c) => c.notNull())
    .addPrimaryKeyConstraint("pjsip_realtime_pending_pk", ["kind", "id"])
    .execute();
  await sql`create sequence pjsip_realtime_pending_seq`.execute(db);
}

// biome-ignore lint/suspicious/noExplicitAny: see up
export async function down(db: Kysely<any>): Promise<void> {
  if (storeDialect(db) !== "postgres") return;
  await sql`drop sequence pjsip_realtime_pending_seq`.execute(db);
  await db.schema.dropTable("pjsip_realtime_pending").execute();
  for (const table of Object.keys(TABLES).reverse()) await db.schema.dropTable(table).execute();
}
