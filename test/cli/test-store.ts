// CLI tests name their store by a data directory, as an operator does. Under `npm run test:pg`
// each test of a suite passed here (or the whole suite, `scope: "suite"`) gets a fresh PostgreSQL database instead, named to the
// commands (which read the process environment) by PBX_DATABASE_URL, as an operator would; on a
// SQLite run nothing changes and the data directory's pbx.db is the store.
import type { Test } from "uvu";
import { freshStoreLocation, type TestStoreLocation, testBackend } from "../store/test-database.js";

export function storePerTest(suite: Test, scope: "each" | "suite" = "each"): void {
  if (testBackend() !== "postgres") return;
  let current: TestStoreLocation | null = null;
  const before = scope === "each" ? suite.before.each : suite.before;
  const after = scope === "each" ? suite.after.each : suite.after;
  before(async () => {
    current = await freshStoreLocation("");
    if (current.location.kind === "postgres") process.env.PBX_DATABASE_URL = current.location.url;
  });
  after(async () => {
    delete process.env.PBX_DATABASE_URL;
    await current?.drop();
    current = null;
  });
}
