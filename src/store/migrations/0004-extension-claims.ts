// One row per internal number in use by a user, IVR or queue of an org. The unique constraint is
// what keeps two concurrent creates from both taking the same extension.
import type { Kysely } from "kysely";
import { timeType } from "./portable.js";

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("extension_claims")
    .addColumn("org_id", "varchar(36)", (c) =>
      c.notNull().references("organizations.id").onDelete("cascade"),
    )
    .addColumn("extension", "varchar(15)", (c) => c.notNull())
    .addColumn("owner_type", "varchar(10)", (c) => c.notNull())
    .addColumn("owner_id", "varchar(36)", (c) => c.notNull())
    .addColumn("created_at", timeType(db), (c) => c.notNull())
    .addPrimaryKeyConstraint("extension_claims_pk", ["org_id", "extension"])
    .execute();
  await db.schema
    .createIndex("extension_claims_owner")
    .on("extension_claims")
    .columns(["owner_type", "owner_id"])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable("extension_claims").execute();
}
