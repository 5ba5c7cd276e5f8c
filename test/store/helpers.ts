// A fresh, migrated SQLite store in a temporary directory.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Db, openStore } from "../../src/store/database.js";

export async function freshStore(): Promise<{ db: Db; file: string; close(): Promise<void> }> {
  const dir = mkdtempSync(join(tmpdir(), "pbx-store-"));
  const file = join(dir, "pbx.db");
  const db = await openStore(file);
  return {
    db,
    file,
    async close() {
      await db.destroy();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Inserts a bare active org row (credentials are placeholders: store tests do not log in). */
export async function insertOrg(
  db: Db,
  id: string,
  name = "Acme",
  contextPrefix = `org_${id}_`,
): Promise<void> {
  const now = "2026-01-01T00:00:00.000Z";
  await db
    .insertInto("organizations")
    .values({
      id,
      name,
      slug: null,
      type: "production",
      status: "active",
      context_prefix: contextPrefix,
      recording_enabled: 1,
      max_concurrent_calls: 0,
      api_key_digest: `digest-${id}`,
      api_key_encrypted: "sealed",
      api_secret_hash: "hash",
      request_status: null,
      requested_by_email: null,
      decided_at: null,
      created_at: now,
      updated_at: now,
    })
    .execute();
}
