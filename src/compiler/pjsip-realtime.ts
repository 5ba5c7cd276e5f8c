// The realtime form of an org's PJSIP objects (issue 24): rows of Asterisk's sorcery realtime
// tables, named and columned as Asterisk's contrib/ast-db-manage defines them (a column is the
// option's name; the table implies `type`). Pure, like the rest of the compiler: the store that
// writes the rows and the engine that reads them are elsewhere.
//
// Which objects go where in realtime mode (ASTERISK.md "Realtime PJSIP"):
// - endpoints, auths and AORs of users and trunks are rows. Asterisk looks each one up by id
//   (wizards with `allow_unqualified_fetch=no` and a memory cache, `pbxctl engine init --pjsip
//   realtime`), so a saved row is live once its cached object is expired: no reload.
// - trunks' outbound registrations are rows too; res_pjsip_outbound_registration loads them all
//   at its (re)load, so their wizard has no `allow_unqualified_fetch=no` and a change needs
//   `module reload res_pjsip_outbound_registration.so` only.
// - trunks' `identify` sections stay in the org's pjsip.conf: identification by address walks
//   every identify object on each unidentified request, which an id-only realtime wizard cannot
//   serve (and a walking one would query the database per carrier call).
//
// Endpoint ids are the file mode's (`<prefix><extension>`), so dial strings and AMI names do not
// change with the mode. Username identification looks up `<user>@<domain>` first and caches no
// miss; engine init's realtime `[global]` sets `disable_multi_domain = yes`, which makes the plain
// `<user>` (the endpoint id) its first and only lookup.
import type { OrgState } from "../model/org-state.js";
import { orgDir } from "./names.js";
import {
  type PjsipObject,
  type PjsipObjectType,
  pjsipHeader,
  pjsipObjects,
  pjsipSections,
} from "./pjsip.js";
import { printSections } from "./print.js";
import type { CompiledFile, Diagnostic, OrgCompileOptions } from "./types.js";

/** Asterisk's realtime table of each object type (contrib/ast-db-manage). */
export const REALTIME_TABLES = {
  endpoint: "ps_endpoints",
  auth: "ps_auths",
  aor: "ps_aors",
  identify: "ps_endpoint_id_ips",
  registration: "ps_registrations",
} as const satisfies Record<PjsipObjectType, string>;

export type RealtimeTable = (typeof REALTIME_TABLES)[PjsipObjectType];

/** Where each object type lives in realtime mode (see the top of this file for why). */
export const REALTIME_PLACEMENT: Record<PjsipObjectType, "row" | "file"> = {
  endpoint: "row",
  auth: "row",
  aor: "row",
  registration: "row",
  identify: "file",
};

/**
 * The columns of pbxctl's realtime tables: every option the compiler writes, plus the ones
 * Asterisk 22 queries even when pbxctl sets nothing there (`ps_endpoints.mailboxes`,
 * `ps_aors.contact`: without them the lookup fails, ASTERISK.md). All are text of any length:
 * Asterisk's own schema has `context VARCHAR(40)`, too short for `org_<uuid>_internal`.
 * `id` is the primary key of each table.
 */
export const REALTIME_COLUMNS: Record<RealtimeTable, readonly string[]> = {
  ps_endpoints: [
    "id",
    "context",
    "disallow",
    "allow",
    "auth",
    "aors",
    "accountcode",
    "callerid",
    "set_var",
    "direct_media",
    "rtp_symmetric",
    "force_rport",
    "rewrite_contact",
    "moh_suggest",
    "outbound_auth",
    "from_user",
    "mailboxes",
  ],
  ps_auths: ["id", "auth_type", "username", "realm", "password", "password_digest"],
  // support_path: behind the SIP edge only (migration 2990 added the column).
  ps_aors: ["id", "max_contacts", "remove_existing", "contact", "support_path"],
  ps_endpoint_id_ips: ["id", "endpoint", "match"],
  ps_registrations: [
    "id",
    "server_uri",
    "client_uri",
    "contact_user",
    "retry_interval",
    "expiration",
    "endpoint",
    "line",
    "outbound_auth",
  ],
};

/** One row: its table and its columns, `id` first, then the object's fields in written order. */
export interface RealtimeRow {
  table: RealtimeTable;
  id: string;
  columns: Record<string, string>;
}

/** An org's PJSIP in realtime mode: its rows, and the file that holds what must stay a file. */
export interface OrgPjsipRealtime {
  rows: RealtimeRow[];
  /** `orgs/<prefix>/pjsip.conf` with the file-placed objects only (trunks' identify). */
  file: CompiledFile;
  diagnostics: Diagnostic[];
}

/** An object as its table's row. Throws for a field the table has no column for (a compiler bug). */
export function realtimeRow(object: PjsipObject): RealtimeRow {
  const table = REALTIME_TABLES[object.type];
  const known = REALTIME_COLUMNS[table];
  const columns: Record<string, string> = { id: object.id };
  for (const { key, value } of object.fields) {
    if (!known.includes(key)) throw new Error(`${table} has no column ${key}`);
    if (key in columns) throw new Error(`${table} row ${object.id} sets ${key} twice`);
    columns[key] = value;
  }
  return { table, id: object.id, columns };
}

function byTableThenId(a: RealtimeRow, b: RealtimeRow): number {
  if (a.table !== b.table) return a.table < b.table ? -1 : 1;
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

/** Every row of an org and its identify-only pjsip.conf, sorted by table then id. */
export function compileOrgPjsipRealtime(
  state: OrgState,
  options: OrgCompileOptions = {},
): OrgPjsipRealtime {
  const diagnostics: Diagnostic[] = [];
  const objects = pjsipObjects(state, diagnostics, options).flatMap((owner) => owner.objects);
  const rows = objects
    .filter((o) => REALTIME_PLACEMENT[o.type] === "row")
    .map(realtimeRow)
    .sort(byTableThenId);
  const fileObjects = objects.filter((o) => REALTIME_PLACEMENT[o.type] === "file");
  const file = {
    path: `${orgDir(state.org.context_prefix)}/pjsip.conf`,
    content: printSections(pjsipSections(pjsipHeader(state), fileObjects)),
  };
  return { rows, file, diagnostics };
}

/**
 * The rows of one user (endpoint, auth and AOR; none when the user is unknown, inactive or has no
 * SIP credential): what a realtime store replaces when that one user changes.
 */
export function userPjsipRows(
  state: OrgState,
  extension: string,
  options: OrgCompileOptions = {},
): RealtimeRow[] {
  const owner = pjsipObjects(state, [], options).find(
    (o) => o.owner.kind === "user" && o.owner.extension === extension,
  );
  return (owner?.objects ?? [])
    .filter((o) => REALTIME_PLACEMENT[o.type] === "row")
    .map(realtimeRow)
    .sort(byTableThenId);
}

/**
 * Rows as a reviewable text (the golden form): one JSON object with every row table as a key in
 * name order, each an array of rows sorted by id, columns in row order.
 */
export function printRealtimeRows(rows: readonly RealtimeRow[]): string {
  const tables: Record<string, Record<string, string>[]> = {};
  const rowTables = Object.entries(REALTIME_TABLES)
    .filter(([type]) => REALTIME_PLACEMENT[type as PjsipObjectType] === "row")
    .map(([, table]) => table)
    .sort();
  for (const table of rowTables) tables[table] = [];
  for (const row of [...rows].sort(byTableThenId)) {
    const list = tables[row.table];
    if (!list) throw new Error(`${row.table} rows are not part of the realtime form`);
    list.push(row.columns);
  }
  return `${JSON.stringify(tables, null, 2)}\n`;
}
