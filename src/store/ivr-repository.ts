// IVR menus of an org with their options, read and written in the OrgState shape.
import { randomUUID } from "node:crypto";
import { type Clock, systemClock } from "../clock.js";
import type { Ivr, IvrOption } from "../model/org-state.js";
import type { Db } from "./database.js";
import { deleteOwnedWithChildren, updateOwned } from "./owned-rows.js";
import type { IvrOptionRow, IvrRow } from "./schema.js";

/** An IVR as stored: its row (with timestamps) and its option rows in order. */
export interface IvrRecord {
  row: IvrRow;
  options: IvrOptionRow[];
}

/** The OrgState IVR described by a row and its option rows (already in order). */
export function ivrFromRows(row: IvrRow, options: IvrOptionRow[]): Ivr {
  return {
    id: row.id,
    name: row.name,
    extension: row.extension,
    description: row.description,
    timeout: row.timeout,
    max_retries: row.max_retries,
    status: row.status as Ivr["status"],
    greeting_language: row.greeting_language,
    greeting_voice: row.greeting_voice,
    greeting_prompt: row.greeting_prompt,
    direct_extension_dial: row.direct_extension_dial === 1,
    options: options.map((o) => ({
      digit: o.digit,
      action_type: o.action_type,
      action_destination: o.action_destination,
      description: o.description,
    })),
  };
}

/** Repository of IVRs over a database or a transaction. */
/** The columns an IVR's own fields are stored in (insert and update write the same ones). */
function ivrColumns(ivr: Ivr) {
  return {
    name: ivr.name,
    extension: ivr.extension,
    description: ivr.description,
    timeout: ivr.timeout,
    max_retries: ivr.max_retries,
    status: ivr.status,
    greeting_language: ivr.greeting_language,
    greeting_voice: ivr.greeting_voice,
    greeting_prompt: ivr.greeting_prompt,
    direct_extension_dial: ivr.direct_extension_dial ? 1 : 0,
  };
}

/** Option rows of IVR `ivrId`, positioned in list order. */
function optionRows(ivrId: string, options: readonly IvrOption[]) {
  return options.map((o, position) => ({
    id: randomUUID(),
    ivr_id: ivrId,
    digit: o.digit,
    action_type: o.action_type,
    action_destination: o.action_destination,
    description: o.description,
    position,
  }));
}

export function createIvrRepository(db: Db, clock: Clock = systemClock) {
  /** Every IVR of the org as rows, ordered by extension, options in order. */
  async function listRecords(orgId: string): Promise<IvrRecord[]> {
    const rows = await db
      .selectFrom("ivrs")
      .selectAll()
      .where("org_id", "=", orgId)
      .orderBy("extension")
      .execute();
    if (rows.length === 0) return [];
    const options = await db
      .selectFrom("ivr_options")
      .selectAll()
      .where(
        "ivr_id",
        "in",
        rows.map((r) => r.id),
      )
      .orderBy("ivr_id")
      .orderBy("position")
      .execute();
    return rows.map((row) => ({ row, options: options.filter((o) => o.ivr_id === row.id) }));
  }

  return {
    /** Inserts an IVR and its options in list order; returns it with its id. */
    async insert(
      orgId: string,
      ivr: Ivr,
      now: string = clock().toISOString(),
    ): Promise<Ivr & { id: string }> {
      const id = ivr.id ?? randomUUID();
      await db
        .insertInto("ivrs")
        .values({
          id,
          org_id: orgId,
          ...ivrColumns(ivr),
          created_at: now,
          updated_at: now,
        })
        .execute();
      if (ivr.options.length > 0) {
        await db.insertInto("ivr_options").values(optionRows(id, ivr.options)).execute();
      }
      return { ...ivr, id };
    },

    /** The row of IVR `id` whatever org owns it (callers check the owner for tenant rules). */
    async findRowById(id: string): Promise<IvrRow | undefined> {
      return db.selectFrom("ivrs").selectAll().where("id", "=", id).executeTakeFirst();
    },

    /** IVR `id` of the org as rows (the IVR and its options in order), or undefined. */
    async findRecord(orgId: string, id: string): Promise<IvrRecord | undefined> {
      const row = await db
        .selectFrom("ivrs")
        .selectAll()
        .where("org_id", "=", orgId)
        .where("id", "=", id)
        .executeTakeFirst();
      if (!row) return undefined;
      const options = await db
        .selectFrom("ivr_options")
        .selectAll()
        .where("ivr_id", "=", id)
        .orderBy("position")
        .execute();
      return { row, options };
    },

    /** Every IVR of the org as rows, ordered by extension, options in order. */
    listRecords,

    /** Rewrites the IVR's own fields (not its options) from `ivr`; true when a row changed. */
    async update(orgId: string, id: string, ivr: Ivr, now: string): Promise<boolean> {
      return updateOwned(db, "ivrs", orgId, id, { ...ivrColumns(ivr), updated_at: now });
    },

    /**
     * Replaces every option of IVR `id` with `options`, stored in list order. Atomic only inside
     * the caller's transaction (delete and insert are two statements).
     */
    async replaceOptions(id: string, options: IvrOption[], now: string): Promise<void> {
      await db.deleteFrom("ivr_options").where("ivr_id", "=", id).execute();
      if (options.length > 0) {
        await db.insertInto("ivr_options").values(optionRows(id, options)).execute();
      }
      await db.updateTable("ivrs").set({ updated_at: now }).where("id", "=", id).execute();
    },

    /** Records a generated greeting on IVR `id` of the org; true when a row changed. */
    async setGreeting(
      orgId: string,
      id: string,
      greeting: {
        greeting_prompt: string;
        greeting_language: string;
        greeting_voice: string;
        updated_at: string;
      },
    ): Promise<boolean> {
      return updateOwned(db, "ivrs", orgId, id, greeting);
    },

    /** Deletes IVR `id` of the org and its options; true when the IVR existed. */
    async delete(orgId: string, id: string): Promise<boolean> {
      return deleteOwnedWithChildren(db, "ivrs", orgId, id);
    },

    /** IVRs of the org ordered by extension, options in their stored order. */
    async listByOrg(orgId: string): Promise<Ivr[]> {
      return (await listRecords(orgId)).map(({ row, options }) => ivrFromRows(row, options));
    },
  };
}

export type IvrRepository = ReturnType<typeof createIvrRepository>;
