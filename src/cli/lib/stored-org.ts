// The store of --data-dir and one org of it (id or slug) for a command that reads the server's
// data, with the two ways that fails (no store, no such org) as one-line CommandFailures.

import { findOrgId } from "../../domain/config/export.js";
import { isDomainError } from "../../domain/errors.js";
import type { Db } from "../../store/database.js";
import { CommandFailure } from "./base-command.js";
import { openExistingStore } from "./existing-store.js";

/**
 * Runs `body` with the store of `dataDir` and the id of org `idOrSlug` (null when none is
 * asked for), then closes the store whatever happens.
 */
export async function withStoredOrg<T>(
  dataDir: string | undefined,
  idOrSlug: string | undefined,
  body: (db: Db, orgId: string | null) => Promise<T>,
): Promise<T> {
  const store = await openExistingStore(dataDir);
  try {
    const orgId =
      idOrSlug === undefined
        ? null
        : await findOrgId(store.db, idOrSlug).catch((error: unknown) => {
            if (isDomainError(error)) throw new CommandFailure(error.message);
            throw error;
          });
    return await body(store.db, orgId);
  } finally {
    await store.db.destroy();
  }
}
