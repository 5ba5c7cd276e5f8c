// Realtime PJSIP behind the SIP edge (issue 26): phones register through the edge, which adds a
// Path header, and their AORs say `support_path=yes` (src/compiler/pjsip.ts). Asterisk's own
// schema has the column (contrib/ast-db-manage, `ps_aors.support_path`); 2950 left it out because
// nothing wrote it then. Text like every other realtime column; PostgreSQL only, as 2950.
import type { Kysely } from "kysely";
import { storeDialect } from "../dialect.js";

// biome-ignore lint/suspicious/noExplicitAny: migrations take whatever handle Kysely gives them
export async function up(db: Kysely<any>): Promise<void> {
  if (storeDialect(db) !== "postgres") return;
  await db.schema.alterTable("ps_aors").addColumn("support_path", "text").execute();
}

// biome-ignore lint/suspicious/noExplicitAny: see up
export async function down(db: Kysely<any>): Promise<void> {
  if (storeDialect(db) !== "postgres") return;
  await db.schema.alterTable("ps_aors").dropColumn("support_path").execute();
}
