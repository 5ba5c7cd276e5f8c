// IVR menus of an org with their options, read and written in the OrgState shape.
import { randomUUID } from "node:crypto";
import type { Ivr } from "../model/org-state.js";
import type { Db } from "./database.js";
import type { IvrOptionRow, IvrRow } from "./schema.js";

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
export function createIvrRepository(db: Db) {
  return {
    /** Inserts an IVR and its options in list order; returns it with its id. */
    async insert(orgId: string, ivr: Ivr): Promise<Ivr & { id: string }> {
      const id = ivr.id ?? randomUUID();
      const now = new Date().toISOString();
      await db
        .insertInto("ivrs")
        .values({
          id,
          org_id: orgId,
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
          created_at: now,
          updated_at: now,
        })
        .execute();
      if (ivr.options.length > 0) {
        await db
          .insertInto("ivr_options")
          .values(
            ivr.options.map((o, position) => ({
              id: randomUUID(),
              ivr_id: id,
              digit: o.digit,
              action_type: o.action_type,
              action_destination: o.action_destination,
              description: o.description,
              position,
            })),
          )
          .execute();
      }
      return { ...ivr, id };
    },

    /** IVRs of the org ordered by extension, options in their stored order. */
    async listByOrg(orgId: string): Promise<Ivr[]> {
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
      return rows.map((row) =>
        ivrFromRows(
          row,
          options.filter((o) => o.ivr_id === row.id),
        ),
      );
    },
  };
}

export type IvrRepository = ReturnType<typeof createIvrRepository>;
