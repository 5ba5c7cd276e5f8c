// Creating an organization row, the one way: `POST /organizations`, an org request
// (`POST /organizations/requests`) and `pbxctl apply` of a new org file all come here. An org
// gets its credentials at birth: the org key (kept sealed under the server key, so an admin can
// read it back) and a secret stored only as a hash. Once engine nodes exist it is placed on one
// in the same transaction (src/domain/nodes/placement.ts): an org that finds no room is not created.
import { randomUUID } from "node:crypto";
import { PREFIX_NESTING_RULE } from "../../model/context-prefix-nesting.js";
import { withDefaults } from "../../model/defaults.js";
import { defaultContextPrefix } from "../../model/fill.js";
import { type OrgInfo, OrgSettings } from "../../model/org-state.js";
import type { OrganizationRecord, OrgPlacementRecord } from "../../model/stored-records.js";
import type { Db } from "../../store/database.js";
import { createOrganizationRepository } from "../../store/organization-repository.js";
import { Conflict } from "../errors.js";
import { placeNewOrg } from "../nodes/placement.js";
import { digest, encrypt, hashSecret, newToken } from "../secrets.js";

/** Context prefix of an org: `org_<id>_` (SPEC.md §1). */
export const contextPrefixOf = defaultContextPrefix;

export interface NewOrganization {
  /** Absent: a fresh UUID. */
  id?: string;
  name: string;
  slug: string | null;
  type?: string;
  status: string;
  /** Absent: `org_<id>_`. */
  contextPrefix?: string;
  /** Omitted settings take the model's defaults. */
  settings?: Partial<OrgInfo["settings"]>;
  /** An org asked for by a signed-in person (`pending` until an admin decides). */
  request?: { status: string; requestedBy: string };
}

/** The new org's row and its credentials, which exist in plain only in this answer. */
export interface CreatedOrganization {
  row: OrganizationRecord;
  apiKey: string;
  apiSecret: string;
  /** Its engine node; null when no node is defined (the implicit engine). */
  placement: OrgPlacementRecord | null;
}

/**
 * Refuses (409) a context prefix that begins another org's or begins with it: an org's PJSIP
 * objects, realtime rows and generated files are named `<prefix>...` and owned by prefix, so
 * `org_` beside `org_<uuid>_` would hand the second org's rows to the first (whose next save
 * would delete them).
 */
export async function assertPrefixApart(
  db: Db,
  prefix: string,
  orgId: string | null,
): Promise<void> {
  const other = await createOrganizationRepository(db).nestingPrefix(prefix, orgId);
  if (other) {
    throw new Conflict(
      `Context prefix ${prefix} overlaps ${other.context_prefix} of organization ${other.name}: ${PREFIX_NESTING_RULE}`,
    );
  }
}

/** Inserts the org (in the caller's transaction when `db` is one). */
export async function createOrganizationRecord(
  db: Db,
  org: NewOrganization,
  options: { serverKey: Buffer; now: string },
): Promise<CreatedOrganization> {
  const id = org.id ?? randomUUID();
  const apiKey = newToken("org_");
  const apiSecret = newToken("");
  const settings = withDefaults(OrgSettings, org.settings ?? {});
  const contextPrefix = org.contextPrefix ?? contextPrefixOf(id);
  const insert = async (trx: Db) => {
    await assertPrefixApart(trx, contextPrefix, null);
    const row = await createOrganizationRepository(trx).insert({
      id,
      name: org.name,
      slug: org.slug,
      type: org.type ?? "production",
      status: org.status,
      context_prefix: contextPrefix,
      recording_enabled: settings.recording_enabled ? 1 : 0,
      max_concurrent_calls: settings.max_concurrent_calls,
      api_key_digest: digest(apiKey),
      api_key_encrypted: encrypt(apiKey, options.serverKey),
      api_secret_hash: hashSecret(apiSecret),
      request_status: org.request?.status ?? null,
      requested_by_email: org.request?.requestedBy ?? null,
      decided_at: null,
      created_at: options.now,
      updated_at: options.now,
    });
    return { row, placement: await placeNewOrg(trx, id, options.now) };
  };
  const { row, placement } = db.isTransaction
    ? await insert(db)
    : await db.transaction().execute(insert);
  return { row, apiKey, apiSecret, placement };
}
