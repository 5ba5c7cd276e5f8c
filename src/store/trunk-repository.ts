// SIP trunks of an org, read and written in the OrgState shape.
import { randomUUID } from "node:crypto";
import { type Clock, systemClock } from "../clock.js";
import type { Trunk } from "../model/org-state.js";
import type { Db } from "./database.js";
import type { TrunkRow } from "./schema.js";

/** The OrgState trunk a row describes. */
export function trunkFromRow(row: TrunkRow): Trunk {
  const trunk: Trunk = {
    id: row.id,
    name: row.name,
    host: row.host,
    port: row.port,
    transport: row.transport as Trunk["transport"],
    username: row.username,
    registration: row.registration === 1,
    codecs: JSON.parse(row.codecs) as Trunk["codecs"],
    match: JSON.parse(row.match_hosts) as string[],
  };
  if (row.password !== null) trunk.password = row.password;
  if (row.password_env !== null) trunk.password_env = row.password_env;
  return trunk;
}

/** The columns a trunk's fields are stored in (insert and replace alike). */
function trunkColumns(trunk: Trunk) {
  return {
    name: trunk.name,
    host: trunk.host,
    port: trunk.port,
    transport: trunk.transport,
    username: trunk.username,
    password: trunk.password ?? null,
    password_env: trunk.password_env ?? null,
    registration: trunk.registration ? 1 : 0,
    codecs: JSON.stringify(trunk.codecs),
    match_hosts: JSON.stringify(trunk.match),
  };
}

/** Repository of trunks over a database or a transaction. */
export function createTrunkRepository(db: Db, clock: Clock = systemClock) {
  return {
    /** Inserts a trunk; returns it with its id. */
    async insert(orgId: string, trunk: Trunk): Promise<Trunk & { id: string }> {
      const id = trunk.id ?? randomUUID();
      const now = clock().toISOString();
      await db
        .insertInto("trunks")
        .values({
          id,
          org_id: orgId,
          ...trunkColumns(trunk),
          created_at: now,
          updated_at: now,
        })
        .execute();
      return { ...trunk, id };
    },

    /** The trunk `id` and its owner, whoever owns it (callers check the owner). */
    async findById(
      id: string,
    ): Promise<{ org_id: string; trunk: Trunk & { id: string } } | undefined> {
      const row = await db.selectFrom("trunks").selectAll().where("id", "=", id).executeTakeFirst();
      return row && { org_id: row.org_id, trunk: { ...trunkFromRow(row), id: row.id } };
    },

    /** Rewrites every field of trunk `id` with `trunk` (password included, as given). */
    async replace(id: string, trunk: Trunk): Promise<void> {
      await db
        .updateTable("trunks")
        .set({
          ...trunkColumns(trunk),
          updated_at: clock().toISOString(),
        })
        .where("id", "=", id)
        .execute();
    },

    /** Deletes trunk `id` (callers make sure no route uses it). */
    async delete(id: string): Promise<void> {
      await db.deleteFrom("trunks").where("id", "=", id).execute();
    },

    /** Every other org's trunks (what a trunk's identify match must not overlap), any order. */
    async listOutsideOrg(orgId: string): Promise<Trunk[]> {
      const rows = await db.selectFrom("trunks").selectAll().where("org_id", "!=", orgId).execute();
      return rows.map(trunkFromRow);
    },

    /** Trunks of the org ordered by name. */
    async listByOrg(orgId: string): Promise<Trunk[]> {
      const rows = await db
        .selectFrom("trunks")
        .selectAll()
        .where("org_id", "=", orgId)
        .orderBy("name")
        .execute();
      return rows.map(trunkFromRow);
    },
  };
}

export type TrunkRepository = ReturnType<typeof createTrunkRepository>;
