// SIP users of an org, read and written in the OrgState shape.
import { randomUUID } from "node:crypto";
import { type Clock, systemClock } from "../clock.js";
import type { User } from "../model/org-state.js";
import { USER_FIELDS } from "../model/user-views.js";
import type { Db } from "./database.js";
import { deleteOwned, updateOwned } from "./owned-rows.js";
import { cachedRead } from "./read-cache.js";
import type { UserRow } from "./schema.js";

/** The columns of a user's own fields: all of them but its SIP credential. */
const LISTED_COLUMNS = ["id", ...USER_FIELDS] as const;

/** The OrgState user, without its SIP credential, that the listed columns describe. */
function listedUser(row: Pick<UserRow, (typeof LISTED_COLUMNS)[number]>): User & { id: string } {
  return {
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
}

/** The OrgState user a row describes. */
export function userFromRow(row: UserRow): User {
  const user: User = listedUser(row);
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
        ...LISTED_COLUMNS.map((column) => `users.${column}` as const),
        "organizations.context_prefix",
      ])
      .where("users.org_id", "=", orgId)
      .orderBy("users.extension")
      .execute();
    return rows.map((row) => ({ user: listedUser(row), contextPrefix: row.context_prefix }));
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
      const columns = { ...userColumns(user), updated_at: clock().toISOString() };
      return updateOwned(db, "users", orgId, id, columns);
    },

    /** Deletes user `id` of the org; true when a row was deleted. */
    async delete(orgId: string, id: string): Promise<boolean> {
      return deleteOwned(db, "users", orgId, id);
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
