// Organizations: rows in, rows out. Credentials arrive already hashed/encrypted. The "served
// org" rule (only an active org has config in the engine) lives here, once.

import { sql } from "kysely";
import { prefixesNest } from "../model/context-prefix-nesting.js";
import type { OrganizationRecord, OrgHandleRecord } from "../model/stored-records.js";
import type { Db } from "./database.js";
import type { OrganizationUpdate } from "./schema.js";

/** The status of an org that is served: its files exist and the include files list it. */
export const SERVED_ORG_STATUS = "active";

/** Only active orgs are served; suspended, inactive and pending orgs compile to no files. */
export function isServed(status: string): boolean {
  return status === SERVED_ORG_STATUS;
}

/** Repository of organizations over a database or a transaction. */
export function createOrganizationRepository(db: Db) {
  return {
    async insert(row: OrganizationRecord): Promise<OrganizationRecord> {
      await db.insertInto("organizations").values(row).execute();
      return row;
    },

    async findById(id: string): Promise<OrganizationRecord | undefined> {
      return db.selectFrom("organizations").selectAll().where("id", "=", id).executeTakeFirst();
    },

    async findByKeyDigest(digest: string): Promise<OrganizationRecord | undefined> {
      return db
        .selectFrom("organizations")
        .selectAll()
        .where("api_key_digest", "=", digest)
        .executeTakeFirst();
    },

    /** Orgs by creation time, optionally only those with one request status. */
    async list(filter: { requestStatus?: string } = {}): Promise<OrganizationRecord[]> {
      let query = db.selectFrom("organizations").selectAll();
      if (filter.requestStatus) query = query.where("request_status", "=", filter.requestStatus);
      return query.orderBy("created_at").orderBy("id").execute();
    },

    /** Orgs whose request was filed by this person (lower-cased email). */
    async listRequestedBy(email: string): Promise<OrganizationRecord[]> {
      return db
        .selectFrom("organizations")
        .selectAll()
        .where("requested_by_email", "=", email)
        .orderBy("created_at")
        .orderBy("id")
        .execute();
    },

    /** The org whose id or slug is `idOrSlug`. */
    async findByIdOrSlug(idOrSlug: string): Promise<OrganizationRecord | undefined> {
      return db
        .selectFrom("organizations")
        .selectAll()
        .where((eb) => eb.or([eb("id", "=", idOrSlug), eb("slug", "=", idOrSlug)]))
        .executeTakeFirst();
    },

    /**
     * An org other than `exceptId` whose context prefix nests with `prefix` (`prefixesNest`: one
     * begins the other, the same prefix included): objects are owned by prefix (realtime PJSIP's
     * rows, file names), so nested prefixes would give one org's objects to another. The SQL
     * only narrows the rows to those the rule can hold; the rule is the model's, the one
     * `pbxctl validate` applies across org files.
     */
    async nestingPrefix(
      prefix: string,
      exceptId: string | null,
    ): Promise<Pick<OrganizationRecord, "name" | "context_prefix"> | undefined> {
      let query = db
        .selectFrom("organizations")
        .select(["name", "context_prefix"])
        .where(
          sql<boolean>`(substr(${prefix}, 1, length(context_prefix)) = context_prefix
            or substr(context_prefix, 1, length(${prefix})) = ${prefix})`,
        );
      if (exceptId !== null) query = query.where("id", "!=", exceptId);
      const rows = await query.orderBy("context_prefix").execute();
      return rows.find((row) => prefixesNest(prefix, row.context_prefix));
    },

    /** Which of `slugs` an org other than `exceptId` holds. */
    async slugsTaken(slugs: readonly string[], exceptId: string | null): Promise<Set<string>> {
      let query = db.selectFrom("organizations").select("slug").where("slug", "in", slugs);
      if (exceptId !== null) query = query.where("id", "!=", exceptId);
      return new Set((await query.execute()).map((row) => row.slug!));
    },

    /** Every org's id, prefix and status by context prefix (no org is loaded). */
    async listHandles(): Promise<OrgHandleRecord[]> {
      return db
        .selectFrom("organizations")
        .select(["id", "context_prefix", "status"])
        .orderBy("context_prefix")
        .execute();
    },

    /** One org's id, prefix and status. */
    async findHandle(id: string): Promise<OrgHandleRecord | undefined> {
      return db
        .selectFrom("organizations")
        .select(["id", "context_prefix", "status"])
        .where("id", "=", id)
        .executeTakeFirst();
    },

    /** Context prefixes of the served orgs (what the top-level include files list). */
    async listServedContextPrefixes(): Promise<string[]> {
      const rows = await db
        .selectFrom("organizations")
        .select("context_prefix")
        .where("status", "=", SERVED_ORG_STATUS)
        .execute();
      return rows.map((row) => row.context_prefix);
    },

    async update(id: string, patch: OrganizationUpdate): Promise<void> {
      await db.updateTable("organizations").set(patch).where("id", "=", id).execute();
    },
  };
}

export type OrganizationRepository = ReturnType<typeof createOrganizationRepository>;
