// The realtime PJSIP tables (migration 2950, PostgreSQL only): Asterisk's `ps_*` rows of every
// org, which Asterisk reads itself, and the changes the engine has not been told about yet
// (`pjsip_realtime_pending`). An org owns the rows whose ids start with its context prefix (the
// compiler names every object `<prefix>...`), one range of the C-collated primary key.
import { type Kysely, type RawBuilder, sql } from "kysely";
import { nodeRealtimeSchema } from "../model/node-realtime.js";
import type { Db } from "./database.js";
import { storeDialect } from "./dialect.js";
import { countEngineNodes, listEngineNodes, orgHolders } from "./engine-node-repository.js";

/** The tables Asterisk's realtime reads, in the order rows are written (endpoints last). */
export const PJSIP_REALTIME_TABLES = [
  "ps_auths",
  "ps_aors",
  "ps_registrations",
  "ps_endpoint_id_ips",
  "ps_endpoints",
] as const;

export type PjsipRealtimeTable = (typeof PJSIP_REALTIME_TABLES)[number];

/** What the engine must be told when a row of each table changes. */
const PENDING_KIND: Record<PjsipRealtimeTable, PendingKind | null> = {
  ps_endpoints: "endpoint",
  ps_auths: "auth",
  ps_aors: "aor",
  ps_registrations: "registration",
  // Identify objects stay in files (src/compiler/pjsip-realtime.ts); the table stays empty.
  ps_endpoint_id_ips: null,
};

export type PendingKind = "endpoint" | "auth" | "aor" | "registration";

/** One row as the compiler gives it: its table, id, and the columns it sets (`id` included). */
export interface PjsipRow {
  table: string;
  id: string;
  columns: Readonly<Record<string, string>>;
}

export interface PjsipRowChange {
  table: PjsipRealtimeTable;
  id: string;
  change: "added" | "changed" | "removed";
}

/** A change an engine has not taken yet. */
export interface PendingPjsipObject {
  /** The engine node owed it; `''` for the one implicit engine (no node defined). */
  nodeId: string;
  kind: PendingKind;
  id: string;
  orgId: string;
  seq: number;
  queuedAt: string;
}

/** Advisory-lock class of one org's row replacement (never the org-write class 2301). */
export const PJSIP_ROWS_LOCK_CLASS = 2401;

/** The realtime tables are PostgreSQL-only; any use on SQLite is a wiring mistake. */
export class RealtimeStoreError extends Error {
  override readonly name = "RealtimeStoreError";
}

function isRealtimeTable(table: string): table is PjsipRealtimeTable {
  return (PJSIP_REALTIME_TABLES as readonly string[]).includes(table);
}

/** `id` within the ids starting with `prefix` (C collation: byte order). */
function underPrefix(prefix: string): RawBuilder<boolean> {
  return sql<boolean>`id >= ${prefix} and id < ${`${prefix}\u{10FFFF}`}`;
}

function sameRow(
  desired: Readonly<Record<string, string>>,
  existing: Readonly<Record<string, string | null>>,
): boolean {
  for (const [column, value] of Object.entries(existing)) {
    if ((desired[column] ?? null) !== value) return false;
  }
  // A column the table lacks would fail the write anyway; the compiler's columns are the table's.
  return Object.keys(desired).every((column) => column in existing);
}

export function createPjsipRealtimeRepository(db: Db) {
  if (storeDialect(db) !== "postgres") {
    throw new RealtimeStoreError("realtime PJSIP rows need the PostgreSQL store");
  }
  return {
    /**
     * Makes the rows under `prefix` exactly `rows`, in one transaction: only rows that differ are
     * written, and each changed endpoint, auth, AOR or registration is queued for the engine in
     * the same transaction. Replacements of one org run one at a time. Returns what changed.
     */
    async replaceOrgRows(options: {
      orgId: string;
      prefix: string;
      rows: readonly PjsipRow[];
      at: string;
      /**
       * Queue added rows for the engine too (default true: a save's new endpoint is verified).
       * The engine caches only objects it found, so an added row has nothing stale to expire;
       * the start-up pass of every org leaves them out, or a first realtime start would owe the
       * engine every object of every org.
       */
      queueAdded?: boolean;
    }): Promise<PjsipRowChange[]> {
      const { orgId, prefix, rows, at } = options;
      for (const row of rows) {
        if (!isRealtimeTable(row.table)) throw new RealtimeStoreError(`no table ${row.table}`);
        if (!row.id.startsWith(prefix)) {
          throw new RealtimeStoreError(`row ${row.id} is not under the org's prefix ${prefix}`);
        }
      }
      return db.transaction().execute(async (trx) => {
        await sql`select pg_advisory_xact_lock(${PJSIP_ROWS_LOCK_CLASS}, hashtext(${orgId}))`.execute(
          trx,
        );
        const changes: PjsipRowChange[] = [];
        for (const table of PJSIP_REALTIME_TABLES) {
          const existing = new Map<string, Record<string, string | null>>();
          const found = await sql<Record<string, string | null>>`
            select * from ${sql.table(table)} where ${underPrefix(prefix)}`.execute(trx);
          for (const row of found.rows) existing.set(row.id as string, row);
          const added: Readonly<Record<string, string>>[] = [];
          for (const row of rows.filter((r) => r.table === table)) {
            const before = existing.get(row.id);
            existing.delete(row.id);
            if (!before) {
              added.push(row.columns);
              changes.push({ table, id: row.id, change: "added" });
            } else if (!sameRow(row.columns, before)) {
              await updateRow(trx, table, row.columns, before);
              changes.push({ table, id: row.id, change: "changed" });
            }
          }
          await insertRows(trx, table, added);
          const removed = [...existing.keys()];
          if (removed.length > 0) {
            await sql`delete from ${sql.table(table)} where id in (${sql.join(removed)})`.execute(
              trx,
            );
            for (const id of removed) changes.push({ table, id, change: "removed" });
          }
        }
        await queue(
          trx,
          orgId,
          options.queueAdded === false ? changes.filter((c) => c.change !== "added") : changes,
          at,
        );
        return changes;
      });
    },

    /**
     * Removes every row not under one of `prefixes` (orgs deleted while no deployer ran), queued
     * for the engine like any change. Returns what it removed.
     */
    async removeRowsOutside(prefixes: readonly string[], at: string): Promise<PjsipRowChange[]> {
      return db.transaction().execute(async (trx) => {
        const sorted = [...prefixes].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
        const changes: PjsipRowChange[] = [];
        for (const table of PJSIP_REALTIME_TABLES) {
          const ids = await sql<{ id: string }>`select id from ${sql.table(table)}`.execute(trx);
          for (const { id } of ids.rows) {
            if (sorted.some((prefix) => id.startsWith(prefix))) continue;
            await sql`delete from ${sql.table(table)} where id = ${id}`.execute(trx);
            changes.push({ table, id, change: "removed" });
          }
        }
        // The org is gone, and its placement with it: every engine may have cached its objects.
        await queue(trx, "", changes, at, { everyEngine: true });
        return changes;
      });
    },

    /**
     * Queues every object of the org for node `nodeId`'s engine, whatever changed: the org
     * reached or left the node (a pin, a standby set or cleared, a move), so the node's view of
     * its rows changed though no row did. Leaving, the node's memory cache would keep serving
     * the org's endpoints (until their lifetime ends) without the expiry; reaching, its trunks'
     * registrations are to be loaded. Returns how many objects were queued.
     */
    async queueOrgForNode(orgId: string, nodeId: string, at: string): Promise<number> {
      return db.transaction().execute(async (trx) => {
        const org = await trx
          .selectFrom("organizations")
          .select("context_prefix")
          .where("id", "=", orgId)
          .executeTakeFirst();
        if (!org) return 0;
        const changes: PjsipRowChange[] = [];
        for (const table of PJSIP_REALTIME_TABLES) {
          if (PENDING_KIND[table] === null) continue;
          const ids = await sql<{ id: string }>`
            select id from ${sql.table(table)} where ${underPrefix(org.context_prefix)}`.execute(
            trx,
          );
          for (const { id } of ids.rows) changes.push({ table, id, change: "changed" });
        }
        await queue(trx, orgId, changes, at, { nodeIds: [nodeId] });
        return changes.filter((c) => PENDING_KIND[c.table] !== null).length;
      });
    },

    /**
     * Every change not taken yet, oldest first: one engine's (`nodeId`, `''` for the implicit
     * one), or every engine's when `nodeId` is absent.
     */
    async pending(
      options: { orgId?: string; nodeId?: string } = {},
    ): Promise<PendingPjsipObject[]> {
      let query = db.selectFrom("pjsip_realtime_pending").selectAll().orderBy("seq");
      if (options.orgId !== undefined) query = query.where("org_id", "=", options.orgId);
      if (options.nodeId !== undefined) query = query.where("node_id", "=", options.nodeId);
      return (await query.execute()).map((row) => ({
        nodeId: row.node_id,
        kind: row.kind as PendingKind,
        id: row.id,
        orgId: row.org_id,
        seq: Number(row.seq),
        queuedAt: row.queued_at,
      }));
    },

    /** The engine took these changes: forgets each unless it changed again since (`seq`). */
    async acknowledge(
      objects: readonly Pick<PendingPjsipObject, "nodeId" | "kind" | "id" | "seq">[],
    ) {
      for (const object of objects) {
        await db
          .deleteFrom("pjsip_realtime_pending")
          .where("node_id", "=", object.nodeId)
          .where("kind", "=", object.kind)
          .where("id", "=", object.id)
          .where("seq", "=", object.seq)
          .execute();
      }
    },

    /**
     * Which of `ids` have a row in `table` now: in the table itself, or as node `nodeName`'s
     * Asterisk sees it (its view, src/store/node-realtime-views.ts).
     */
    async existing(
      table: PjsipRealtimeTable,
      ids: readonly string[],
      nodeName?: string,
    ): Promise<Set<string>> {
      if (ids.length === 0) return new Set();
      const from =
        nodeName === undefined
          ? sql.table(table)
          : sql`${sql.id(nodeRealtimeSchema(nodeName))}.${sql.id(table)}`;
      const found = await sql<{ id: string }>`
        select id from ${from} where id in (${sql.join(ids)})`.execute(db);
      return new Set(found.rows.map((row) => row.id));
    },

    /** The columns of one row, or null (tests and `pbxctl status`). */
    async row(table: PjsipRealtimeTable, id: string): Promise<Record<string, string> | null> {
      const found = await sql<Record<string, string | null>>`
        select * from ${sql.table(table)} where id = ${id}`.execute(db);
      const row = found.rows[0];
      if (!row) return null;
      return Object.fromEntries(
        Object.entries(row).filter((entry): entry is [string, string] => entry[1] !== null),
      );
    },
  };
}

export type PjsipRealtimeRepository = ReturnType<typeof createPjsipRealtimeRepository>;

async function updateRow(
  trx: Kysely<unknown> | Db,
  table: PjsipRealtimeTable,
  columns: Readonly<Record<string, string>>,
  before: Readonly<Record<string, string | null>>,
): Promise<void> {
  // Every column the compiler leaves out goes back to NULL: a row is the compiler's whole
  // object, never a merge with what was there.
  const assignments = Object.keys(before)
    .filter((column) => column !== "id")
    .map((column) => sql`${sql.ref(column)} = ${columns[column] ?? null}`);
  await sql`update ${sql.table(table)} set ${sql.join(assignments)} where id = ${before.id}`.execute(
    trx,
  );
}

/** Inserts rows, one statement per set of columns (a user's and a trunk's rows differ). */
async function insertRows(
  trx: Kysely<unknown> | Db,
  table: PjsipRealtimeTable,
  rows: readonly Readonly<Record<string, string>>[],
): Promise<void> {
  const byColumns = new Map<string, Readonly<Record<string, string>>[]>();
  for (const row of rows) {
    const key = Object.keys(row).join(",");
    byColumns.set(key, [...(byColumns.get(key) ?? []), row]);
  }
  for (const group of byColumns.values()) {
    const names = Object.keys(group[0]!);
    const values = group.map((row) => sql`(${sql.join(names.map((n) => row[n]))})`);
    await sql`insert into ${sql.table(table)} (${sql.join(names.map((n) => sql.ref(n)))})
      values ${sql.join(values)}`.execute(trx);
  }
}

/**
 * The engines owed a change of the org's rows: every node holding it (primary, standby, a move's
 * sides; `everyEngine`: every node, for an org that is gone), or the one implicit engine (`''`)
 * while no node is defined.
 */
async function owedEngines(
  trx: Db,
  orgId: string,
  options: { everyEngine?: boolean },
): Promise<string[]> {
  if ((await countEngineNodes(trx)) === 0) return [""];
  if (options.everyEngine) return (await listEngineNodes(trx)).map((node) => node.id);
  return orgHolders(trx, orgId);
}

async function queue(
  trx: Db,
  orgId: string,
  changes: readonly PjsipRowChange[],
  at: string,
  options: { nodeIds?: readonly string[]; everyEngine?: boolean } = {},
): Promise<void> {
  const owedChanges = changes.filter((change) => PENDING_KIND[change.table] !== null);
  if (owedChanges.length === 0) return;
  const engines = options.nodeIds ?? (await owedEngines(trx, orgId, options));
  const owed = engines.flatMap((nodeId) =>
    owedChanges.map(
      (change) =>
        sql`(${nodeId}, ${PENDING_KIND[change.table]}, ${change.id}, ${orgId}, nextval('pjsip_realtime_pending_seq'), ${at})`,
    ),
  );
  if (owed.length === 0) return;
  await sql`
    insert into pjsip_realtime_pending (node_id, kind, id, org_id, seq, queued_at)
    values ${sql.join(owed)}
    on conflict (node_id, kind, id) do update
      set seq = excluded.seq, org_id = excluded.org_id, queued_at = excluded.queued_at`.execute(
    trx,
  );
}
