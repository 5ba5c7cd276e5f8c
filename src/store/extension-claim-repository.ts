// The org-wide register of internal numbers. A claim is one insert guarded by the primary key
// (org_id, extension), so of two concurrent claims exactly one wins.

import { type Clock, systemClock } from "../clock.js";
import type { Db } from "./database.js";

export type ExtensionOwnerType = "user" | "ivr" | "queue";

export interface ExtensionOwner {
  type: ExtensionOwnerType;
  id: string;
}

export interface ExtensionHolder extends ExtensionOwner {
  /** Name of the user, IVR or queue holding the number (for the 409 message). */
  name: string;
}

export type ClaimResult = { claimed: true } | { claimed: false; holder: ExtensionHolder };

/** Repository of extension claims over a database or a transaction. */
export function createExtensionClaimRepository(db: Db, clock: Clock = systemClock) {
  async function holderOf(orgId: string, extension: string): Promise<ExtensionHolder | undefined> {
    const claim = await db
      .selectFrom("extension_claims")
      .select(["owner_type", "owner_id"])
      .where("org_id", "=", orgId)
      .where("extension", "=", extension)
      .executeTakeFirst();
    if (!claim) return undefined;
    const type = claim.owner_type as ExtensionOwnerType;
    const table = type === "user" ? "users" : type === "ivr" ? "ivrs" : "queues";
    const owner = await db
      .selectFrom(table)
      .select("name")
      .where("id", "=", claim.owner_id)
      .executeTakeFirst();
    return { type, id: claim.owner_id, name: owner?.name ?? "" };
  }

  /** Takes `extension` for the owner, or reports who already holds it. */
  async function claim(
    orgId: string,
    extension: string,
    owner: ExtensionOwner,
  ): Promise<ClaimResult> {
    // ON CONFLICT DO NOTHING (SQLite and PostgreSQL alike) instead of catching the violation:
    // in PostgreSQL a failed statement would abort the caller's transaction.
    const result = await db
      .insertInto("extension_claims")
      .values({
        org_id: orgId,
        extension,
        owner_type: owner.type,
        owner_id: owner.id,
        created_at: clock().toISOString(),
      })
      .onConflict((oc) => oc.columns(["org_id", "extension"]).doNothing())
      .executeTakeFirst();
    if (Number(result.numInsertedOrUpdatedRows ?? 0n) > 0) return { claimed: true };
    const holder = await holderOf(orgId, extension);
    // The holder vanished between the two statements: try again.
    if (!holder) return claim(orgId, extension, owner);
    if (holder.type === owner.type && holder.id === owner.id) return { claimed: true };
    return { claimed: false, holder };
  }

  /** Frees a number held by this owner (no-op when someone else holds it). */
  async function release(orgId: string, extension: string, owner: ExtensionOwner): Promise<void> {
    await db
      .deleteFrom("extension_claims")
      .where("org_id", "=", orgId)
      .where("extension", "=", extension)
      .where("owner_type", "=", owner.type)
      .where("owner_id", "=", owner.id)
      .execute();
  }

  /** Frees every number of the org (apply rebuilds the claims from the final state). */
  async function releaseAll(orgId: string): Promise<void> {
    await db.deleteFrom("extension_claims").where("org_id", "=", orgId).execute();
  }

  return { holderOf, claim, release, releaseAll };
}

export type ExtensionClaimRepository = ReturnType<typeof createExtensionClaimRepository>;
