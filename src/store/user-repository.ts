// SIP users of an org, read and written in the OrgState shape.
import { randomUUID } from "node:crypto";
import type { User } from "../model/org-state.js";
import type { Db } from "./database.js";
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
export function createUserRepository(db: Db) {
  return {
    /** Inserts a user (defaults already applied); returns it with its id. */
    async insert(orgId: string, user: User): Promise<User & { id: string }> {
      const id = user.id ?? randomUUID();
      const now = new Date().toISOString();
      await db
        .insertInto("users")
        .values({
          id,
          org_id: orgId,
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
