// The engine suite's realtime PJSIP setup without the server: a throwaway PostgreSQL 15 with
// pbxctl's own migrated schema (the tables Asterisk reads are migration 2950's), the compiler's
// rows written straight into it, and the generated tree as a realtime deploy writes it (each
// org's pjsip.conf holding only its trunks' identify). Shared by the traced calls in realtime
// mode and the boot over 1,000 orgs of rows, so both run on exactly what the compiler prints.
import { compileOrgPjsipRealtime, type RealtimeRow } from "../../src/compiler/index.js";
import { REALTIME_COLUMNS } from "../../src/compiler/pjsip-realtime.js";
import type { CompiledFile } from "../../src/compiler/types.js";
import type { OrgState } from "../../src/model/org-state.js";
import { migrateToLatest, openStoreHandle } from "../../src/store/database.js";
import { type Postgres, startPostgres } from "./postgres.js";

/** A PostgreSQL whose schema is pbxctl's (every migration applied, as `pbxctl db migrate`). */
export async function startRealtimeDatabase(): Promise<Postgres> {
  const db = await startPostgres();
  try {
    const store = openStoreHandle({ kind: "postgres", url: db.url, poolSize: 1 });
    try {
      await migrateToLatest(store);
    } finally {
      await store.destroy();
    }
    return db;
  } catch (error) {
    await db.stop();
    throw error;
  }
}

/**
 * `files` (a file-mode compile of `orgs`) as realtime mode deploys them, and the orgs' rows: each
 * org's pjsip.conf becomes the realtime compile's file (identify only). Throws on a diagnostic.
 */
export function realtimeForm(
  orgs: readonly OrgState[],
  files: readonly CompiledFile[],
): { files: CompiledFile[]; rows: RealtimeRow[] } {
  const replaced = new Map<string, CompiledFile>();
  const rows: RealtimeRow[] = [];
  for (const org of orgs) {
    const realtime = compileOrgPjsipRealtime(org);
    const errors = realtime.diagnostics.filter((d) => d.severity === "error");
    if (errors.length > 0) throw new Error(errors.map((d) => d.message).join("; "));
    replaced.set(realtime.file.path, realtime.file);
    rows.push(...realtime.rows);
  }
  return { files: files.map((file) => replaced.get(file.path) ?? file), rows };
}

/** COPY's text format: `\N` is NULL, and backslash, tab, newline and CR are escaped. */
function copyValue(value: string | undefined): string {
  if (value === undefined) return "\\N";
  return value.replace(
    /[\\\t\n\r]/g,
    (c) => ({ "\\": "\\\\", "\t": "\\t", "\n": "\\n", "\r": "\\r" })[c]!,
  );
}

/**
 * The psql script that writes `rows` in bulk: one `COPY ... FROM STDIN` per table (one statement
 * each, however many rows), every column of REALTIME_COLUMNS, NULL where the row has none.
 */
export function copyRowsScript(rows: readonly RealtimeRow[]): string {
  const byTable = new Map<string, RealtimeRow[]>();
  for (const row of rows) {
    const list = byTable.get(row.table);
    if (list) list.push(row);
    else byTable.set(row.table, [row]);
  }
  const parts: string[] = [];
  for (const [table, tableRows] of byTable) {
    const columns = REALTIME_COLUMNS[table as keyof typeof REALTIME_COLUMNS];
    parts.push(`COPY ${table} (${columns.map((c) => `"${c}"`).join(", ")}) FROM STDIN;`);
    for (const row of tableRows) {
      parts.push(columns.map((c) => copyValue(row.columns[c])).join("\t"));
    }
    parts.push("\\.");
  }
  return `${parts.join("\n")}\n`;
}

/** Writes `rows` into `db`'s realtime tables in bulk (not through the API). */
export async function writeRows(db: Postgres, rows: readonly RealtimeRow[]): Promise<void> {
  if (rows.length === 0) return;
  await db.sql(copyRowsScript(rows));
}
