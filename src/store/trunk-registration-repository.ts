// The org trunks' outbound registration statuses (migration 2201), as the engine last listed them.
import type { Db } from "./database.js";

export interface TrunkRegistrationsTable {
  org_id: string;
  /** The engine's registration section: `<context_prefix>trunk_<name>`. */
  registration: string;
  /** Asterisk's status word: `Registered`, `Unregistered`, `Rejected`, `Stopped`. */
  status: string;
  updated_at: string;
}

/** The status last recorded for the org's registration, or null when none was. */
export async function trunkRegistrationStatus(
  db: Db,
  orgId: string,
  registration: string,
): Promise<string | null> {
  const row = await db
    .selectFrom("trunk_registrations")
    .select("status")
    .where("org_id", "=", orgId)
    .where("registration", "=", registration)
    .executeTakeFirst();
  return row?.status ?? null;
}

/** Records the registration's status (insert or replace). */
export async function saveTrunkRegistrationStatus(
  db: Db,
  row: { orgId: string; registration: string; status: string; now: string },
): Promise<void> {
  await db
    .insertInto("trunk_registrations")
    .values({
      org_id: row.orgId,
      registration: row.registration,
      status: row.status,
      updated_at: row.now,
    })
    .onConflict((oc) =>
      oc
        .columns(["org_id", "registration"])
        .doUpdateSet({ status: row.status, updated_at: row.now }),
    )
    .execute();
}

/** Every recorded registration (all orgs): the engine's whole list is compared against it. */
export async function listTrunkRegistrations(
  db: Db,
): Promise<{ org_id: string; registration: string }[]> {
  return db.selectFrom("trunk_registrations").select(["org_id", "registration"]).execute();
}

/** Forgets a registration the engine no longer has (its trunk was removed or stopped registering). */
export async function forgetTrunkRegistration(
  db: Db,
  orgId: string,
  registration: string,
): Promise<void> {
  await db
    .deleteFrom("trunk_registrations")
    .where("org_id", "=", orgId)
    .where("registration", "=", registration)
    .execute();
}
