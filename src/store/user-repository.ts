// SIP users of an org, read and written in the OrgState shape.
import { randomUUID } from "node:crypto";
import { type Clock, systemClock } from "../clock.js";
import type { User } from "../model/org-state.js";
import type { Db } from "./database.js";
import { cachedRead } from "./read-cache.js";
import type { UserRow } from "./schema.js";

/** The OrgState user a row describes. */
export function userFromRow(row: UserRow): User {
  const user: User = {
    id: row.id,
    extension: row.extension,
    name: row.name,
    routing_type: row.routing_type as User["routing_type"],
    status: row.status as User["status"],
    ring_target: row.ring_target as User["ring_target"],
    phone_number: row.phone_number,
    ring_time: row.ring_time,
    outbound_did: row.outbound_did,
    call_recording: row.call_recording === 1,
  };
  if (row.sip_md5_cred || row.sip_password_env) {
    user.sip = {};
    if (row.sip_md5_cred) user.sip.md5_cred = row.sip_md5_cred;
    if (row.sip_password_env) user.sip.password_env = row.sip_password_env;
  }
  return user;
}

/** Repository of SIP users over a database or a transaction. */
/** The columns a user's own fields are stored in (insert and update write the same ones). */
function userColumns(user: User) {
  return {
    extension: user.extension,
    name: user.name,
    routing_type: user.routing_type,
    status: user.status,
    ring_target: user.ring_target,
    phone_number: user.phone_number,
    ring_time: user.ring_time,
    outbound_did: user.outbound_did,
    call_recording: user.call_recording ? 1 : 0,
    sip_md5_cred: user.sip?.md5_cred ?? null,
    sip_password_env: user.sip?.password_env ?? null,
  };
}

export function createUserRepository(db: Db, clock: Clock = systemClock) {
  // One query reading only the columns a listing shows: `GET /users` is the API's hot path.
  async function loadWithContextPrefix(
    orgId: string,
  ): Promise<Array<{ user: User & { id: string }; contextPrefix: string }>> {
    const rows = await db
      .selectFrom("users")
      .innerJoin("organizations", "organizations.id", "users.org_id")
      .select([
        "users.id",
        "users.extension",
        "users.name",
        "users.routing_type",
        "users.status",
        "users.ring_target",
        "users.phone_number",
        "users.ring_time",
        "users.outbound_did",
        "users.call_recording",
        "organizations.context_prefix",
      ])
      .where("users.org_id", "=", orgId)
      .orderBy("users.extension")
      .execute();
    return rows.map((row) => ({
      user: {
        id: row.id,
        extension: row.extension,
        name: row.name,
        routing_type: row.routing_type as User["routing_type"],
        status: row.status as User["status"],
        ring_target: row.ring_target as User["ring_target"],
        phone_number: row.phone_number,
        ring_time: row.ring_time,
        outbound_did: row.outbound_did,
        call_recording: row.call_recording === 1,
      },
      contextPrefix: row.context_prefix,
    }));
  }

  return {
    /** Inserts a user (defaults already applied); returns it with its id. */
    async insert(orgId: string, user: User): Promise<User & { id: string }> {
      const id = user.id ?? randomUUID();
      const now = clock().toISOString();
      await db
        .insertInto("users")
        .values({
          id,
          org_id: orgId,
          ...userColumns(user),
          created_at: now,
          updated_at: now,
        })
        .execute();
      return { ...user, id };
    },

    /** Users of the org ordered by extension. */
    async listByOrg(orgId: string): Promise<User[]> {
      const rows = await db
        .selectFrom("users")
        .selectAll()
        .where("org_id", "=", orgId)
        .orderBy("extension")
        .execute();
      return rows.map(userFromRow);
    },

    /**
     * Users of the org ordered by extension, without their SIP credential, each with the org's
     * context prefix (the SIP username is built from it). One query reading only the columns a
     * listing shows, since `GET /users` is the API's hot path.
     */
    async listWithContextPrefix(
      orgId: string,
    ): Promise<ReadonlyArray<{ user: User & { id: string }; contextPrefix: string }>> {
      return cachedRead(db, `users-with-prefix:${orgId}`, () => loadWithContextPrefix(orgId));
    },

    /** The row of user `id` whatever org owns it (callers check the owner for tenant rules). */
    async findRowById(id: string): Promise<UserRow | undefined> {
      return db.selectFrom("users").selectAll().where("id", "=", id).executeTakeFirst();
    },

    /** Rewrites every field of user `id` of the org from `user`; true when a row changed. */
    async update(orgId: string, id: string, user: User): Promise<boolean> {
      const result = await db
        .updateTable("users")
        .set({
          ...userColumns(user),
          updated_at: clock().toISOString(),
        })
        .where("org_id", "=", orgId)
        .where("id", "=", id)
        .executeTakeFirst();
      return Number(result.numUpdatedRows) > 0;
    },

    /** Deletes user `id` of the org; true when a row was deleted. */
    async delete(orgId: string, id: string): Promise<boolean> {
      const result = await db
        .deleteFrom("users")
        .where("org_id", "=", orgId)
        .where("id", "=", id)
        .executeTakeFirst();
      return Number(result.numDeletedRows) > 0;
    },

    /** Extensions of the org's users with this routing type and status, ascending. */
    async listExtensions(
      orgId: string,
      filter: { routingType: User["routing_type"]; status: User["status"] },
    ): Promise<string[]> {
      const rows = await db
        .selectFrom("users")
        .select("extension")
        .where("org_id", "=", orgId)
        .where("routing_type", "=", filter.routingType)
        .where("status", "=", filter.status)
        .orderBy("extension")
        .execute();
      return rows.map((r) => r.extension);
    },

    async findById(orgId: string, id: string): Promise<User | undefined> {
      const row = await db
        .selectFrom("users")
        .selectAll()
        .where("org_id", "=", orgId)
        .where("id", "=", id)
        .executeTakeFirst();
      return row ? userFromRow(row) : undefined;
    },
  };
}

export type UserRepository = ReturnType<typeof createUserRepository>;
