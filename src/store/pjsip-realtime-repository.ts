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

/**
 * Advisory-lock class (key 0) between queueing for the one implicit engine and the first node's
 * creation, which takes over what it was owed (`handImplicitEngineDebtTo`): shared by the writes
 * that may queue for the implicit engine, exclusive for the hand-over. A write that decided on
 * the implicit engine before the first node committed has committed its queue when the
 * hand-over reads it, or waits and queues for the node (`implicitEngine`).
 */
export const IMPLICIT_ENGINE_LOCK_CLASS = 2402;

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
      /** Called once the org's current rows are read (bench:engine's trace of a save). */
      onRead?: () => void;
    }): Promise<PjsipRowChange[]> {
      const { orgId, prefix, rows, at } = options;
      for (const row of rows) {
        if (!isRealtimeTable(row.table)) throw new RealtimeStoreError(`no table ${row.table}`);
        if (!row.id.startsWith(prefix)) {
          throw new RealtimeStoreError(`row ${row.id} is not under the org's prefix ${prefix}`);
        }
      }
      // Round trips are what a save waits for (bench:engine --trace-registrable): the lock, one
      // read of the org's rows in all five tables, and one statement for every write.
      return db.transaction().execute(async (trx) => {
        // The lock's round trip also counts the engine nodes: with none (one implicit engine) the
        // engines owed the changes are known without another query. (The count is of the
        // statement's start, before any wait for the locks: `implicitEngine` covers a first
        // node created meanwhile.)
        const locked = await sql<{ nodes: string }>`
          select pg_advisory_xact_lock(${PJSIP_ROWS_LOCK_CLASS}, hashtext(${orgId})),
            pg_advisory_xact_lock_shared(${IMPLICIT_ENGINE_LOCK_CLASS}, 0),
            (select count(*) from engine_nodes) as nodes`.execute(trx);
        const nodes = Number(locked.rows[0]!.nodes);
        const current = await orgRows(trx, prefix);
        options.onRead?.();
        const { changes, writes } = planOrgRows(current, rows);
        const owed =
          options.queueAdded === false ? changes.filter((c) => c.change !== "added") : changes;
        if (owed.some((change) => PENDING_KIND[change.table] !== null)) {
          writes.push(...queueRows(await owedEngines(trx, orgId, { nodes }), orgId, owed, at));
        }
        await inOneStatement(trx, writes);
        return changes;
      });
    },

    /**
     * What `replaceOrgRows` would change to make the rows under `prefix` exactly `rows`, written
     * nothing: the org's rows not written yet (`GET /config/status` in realtime mode). One query.
     */
    async unwrittenRows(options: {
      prefix: string;
      rows: readonly PjsipRow[];
    }): Promise<PjsipRowChange[]> {
      return planOrgRows(await orgRows(db, options.prefix), options.rows).changes;
    },

    /**
     * Removes every row not under one of `prefixes` (orgs deleted while no deployer ran), queued
     * for the engine like any change. Returns what it removed.
     */
    async removeRowsOutside(prefixes: readonly string[], at: string): Promise<PjsipRowChange[]> {
      return db.transaction().execute(async (trx) => {
        await sql`select pg_advisory_xact_lock_shared(${IMPLICIT_ENGINE_LOCK_CLASS}, 0)`.execute(
          trx,
        );
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
      for (const slice of chunks(objects, MAX_PARAMETERS / 4)) {
        const keys = slice.map((o) => sql`(${o.nodeId}, ${o.kind}, ${o.id}, ${o.seq}::bigint)`);
        await sql`
          delete from pjsip_realtime_pending
          where (node_id, kind, id, seq) in (values ${sql.join(keys)})`.execute(db);
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

/**
 * The first engine node takes over what the one implicit engine was owed, in the transaction that
 * creates it: it takes every org the implicit engine held, and is meant to name that same Asterisk
 * (docs/nodes.md), whose memory cache may still hold the objects. Left under `''`, no deployer
 * would ever take them (the implicit engine is no longer deployed once a node exists) and
 * `pbxctl status` would list them as owed for good. Returns how many objects it took over;
 * nothing on SQLite, which keeps no realtime rows.
 */
export async function handImplicitEngineDebtTo(trx: Db, nodeId: string): Promise<number> {
  if (storeDialect(trx) !== "postgres") return 0;
  // Waits for the writes queueing for the implicit engine now; later ones wait for this commit.
  await sql`select pg_advisory_xact_lock(${IMPLICIT_ENGINE_LOCK_CLASS}, 0)`.execute(trx);
  const moved = await trx
    .updateTable("pjsip_realtime_pending")
    .set({ node_id: nodeId })
    .where("node_id", "=", "")
    .executeTakeFirst();
  return Number(moved.numUpdatedRows);
}

/**
 * What node `nodeId`'s engine was owed goes with the node, in the transaction that removes it:
 * no deployer will ever take it. Nothing on SQLite.
 */
export async function forgetDebtOfNode(trx: Db, nodeId: string): Promise<void> {
  if (storeDialect(trx) !== "postgres") return;
  await trx.deleteFrom("pjsip_realtime_pending").where("node_id", "=", nodeId).execute();
}

/**
 * The changes and writes that make an org's `current` rows exactly `rows`: only rows that differ
 * are written (an update per changed row, inserts per table, deletes of rows no longer compiled).
 */
function planOrgRows(
  current: Map<PjsipRealtimeTable, Map<string, Record<string, string | null>>>,
  rows: readonly PjsipRow[],
): { changes: PjsipRowChange[]; writes: RawBuilder<unknown>[] } {
  const changes: PjsipRowChange[] = [];
  const writes: RawBuilder<unknown>[] = [];
  for (const table of PJSIP_REALTIME_TABLES) {
    const existing = new Map(current.get(table) ?? []);
    const added: Readonly<Record<string, string>>[] = [];
    for (const row of rows.filter((r) => r.table === table)) {
      const before = existing.get(row.id);
      existing.delete(row.id);
      if (!before) {
        added.push(row.columns);
        changes.push({ table, id: row.id, change: "added" });
      } else if (!sameRow(row.columns, before)) {
        writes.push(updateRow(table, row.columns, before));
        changes.push({ table, id: row.id, change: "changed" });
      }
    }
    writes.push(...insertRows(table, added));
    const removed = [...existing.keys()];
    for (const ids of chunks(removed, MAX_PARAMETERS)) {
      writes.push(sql`delete from ${sql.table(table)} where id in (${sql.join(ids)})`);
    }
    for (const id of removed) changes.push({ table, id, change: "removed" });
  }
  return { changes, writes };
}

/** The org's current rows of every table, by table then id, in one query. */
async function orgRows(
  trx: Kysely<unknown> | Db,
  prefix: string,
): Promise<Map<PjsipRealtimeTable, Map<string, Record<string, string | null>>>> {
  const selects = PJSIP_REALTIME_TABLES.map(
    (table) =>
      sql`select ${table}::text as "table", to_jsonb(t) as "row"
        from ${sql.table(table)} as t where ${underPrefix(prefix)}`,
  );
  const found = await sql<{ table: PjsipRealtimeTable; row: Record<string, string | null> }>`
    ${sql.join(selects, sql` union all `)}`.execute(trx);
  const byTable = new Map<PjsipRealtimeTable, Map<string, Record<string, string | null>>>();
  for (const { table, row } of found.rows) {
    const rows = byTable.get(table) ?? new Map<string, Record<string, string | null>>();
    rows.set(row.id as string, row);
    byTable.set(table, rows);
  }
  return byTable;
}

/**
 * Runs the writes as one statement: each is a data-modifying WITH query, which PostgreSQL runs
 * to completion whether or not the statement reads it. Each touches other rows (one row, one
 * table's inserts or deletes, the pending queue), so their order within the statement is moot.
 */
async function inOneStatement(
  trx: Kysely<unknown> | Db,
  writes: readonly RawBuilder<unknown>[],
): Promise<void> {
  // PostgreSQL binds at most 65,535 parameters per statement: an org of thousands of users
  // takes a few statements, an org of 50 one.
  const statements: RawBuilder<unknown>[][] = [];
  let bound = Number.POSITIVE_INFINITY;
  for (const write of writes) {
    const parameters = write.compile(trx).parameters.length;
    if (bound + parameters > MAX_PARAMETERS) {
      statements.push([]);
      bound = 0;
    }
    statements.at(-1)!.push(write);
    bound += parameters;
  }
  for (const statement of statements) {
    const parts = statement.map((write, i) => sql`${sql.raw(`w${i}`)} as (${write})`);
    await sql`with ${sql.join(parts)} select 1`.execute(trx);
  }
}

/** Parameters per statement, well under PostgreSQL's 65,535. */
const MAX_PARAMETERS = 30_000;

function updateRow(
  table: PjsipRealtimeTable,
  columns: Readonly<Record<string, string>>,
  before: Readonly<Record<string, string | null>>,
): RawBuilder<unknown> {
  // Every column the compiler leaves out goes back to NULL: a row is the compiler's whole
  // object, never a merge with what was there.
  const assignments = Object.keys(before)
    .filter((column) => column !== "id")
    .map((column) => sql`${sql.ref(column)} = ${columns[column] ?? null}`);
  return sql`update ${sql.table(table)} set ${sql.join(assignments)} where id = ${before.id}`;
}

/** The inserts of rows, one per set of columns (a user's and a trunk's rows differ). */
function insertRows(
  table: PjsipRealtimeTable,
  rows: readonly Readonly<Record<string, string>>[],
): RawBuilder<unknown>[] {
  const byColumns = new Map<string, Readonly<Record<string, string>>[]>();
  for (const row of rows) {
    const key = Object.keys(row).join(",");
    byColumns.set(key, [...(byColumns.get(key) ?? []), row]);
  }
  return [...byColumns.values()].flatMap((group) => {
    const names = Object.keys(group[0]!);
    const perStatement = Math.max(1, Math.floor(MAX_PARAMETERS / names.length));
    return chunks(group, perStatement).map((slice) => {
      const values = slice.map((row) => sql`(${sql.join(names.map((n) => row[n]))})`);
      return sql`insert into ${sql.table(table)} (${sql.join(names.map((n) => sql.ref(n)))})
        values ${sql.join(values)}`;
    });
  });
}

/**
 * The engines owed a change of the org's rows: every node holding it (primary, standby, a move's
 * sides; `everyEngine`: every node, for an org that is gone), or the one implicit engine (`''`)
 * while no node is defined (`nodes`: how many there are, when the caller has counted them).
 */
async function owedEngines(
  trx: Db,
  orgId: string,
  options: { everyEngine?: boolean; nodes?: number },
): Promise<string[]> {
  if ((options.nodes ?? (await countEngineNodes(trx))) === 0) return [""];
  if (options.everyEngine) return (await listEngineNodes(trx)).map((node) => node.id);
  return orgHolders(trx, orgId);
}

/** Queues `changes` for the engines owed them (`owedEngines`, or `nodeIds`), in one statement. */
async function queue(
  trx: Db,
  orgId: string,
  changes: readonly PjsipRowChange[],
  at: string,
  options: { nodeIds?: readonly string[]; everyEngine?: boolean } = {},
): Promise<void> {
  if (!changes.some((change) => PENDING_KIND[change.table] !== null)) return;
  const engines = options.nodeIds ?? (await owedEngines(trx, orgId, options));
  await inOneStatement(trx, queueRows(engines, orgId, changes, at));
}

/** `items` in slices of at most `size`. */
function chunks<T>(items: readonly T[], size: number): T[][] {
  const slices: T[][] = [];
  for (let from = 0; from < items.length; from += size) slices.push(items.slice(from, from + size));
  return slices;
}

/**
 * The implicit engine (`''`) as the queueing statement sees it: the engines were counted before
 * the write's locks were granted, so a first node may have been created since; its creation
 * placed every org on it, and the org's changes are that node's.
 */
function implicitEngine(orgId: string): RawBuilder<string> {
  return sql<string>`coalesce((select node_id from org_placements where org_id = ${orgId}), '')`;
}

/** The upserts queueing `changes` for each of `engines` (none when no change concerns one). */
function queueRows(
  engines: readonly string[],
  orgId: string,
  changes: readonly PjsipRowChange[],
  at: string,
): RawBuilder<unknown>[] {
  const owed = engines.flatMap((nodeId) =>
    changes.flatMap((change) => {
      const kind = PENDING_KIND[change.table];
      return kind === null
        ? []
        : [
            sql`(${nodeId === "" ? implicitEngine(orgId) : nodeId}, ${kind}, ${change.id}, ${orgId}, nextval('pjsip_realtime_pending_seq'), ${at}::timestamptz)`,
          ];
    }),
  );
  // Five parameters a row.
  return chunks(owed, MAX_PARAMETERS / 5).map(
    (rows) => sql`
      insert into pjsip_realtime_pending (node_id, kind, id, org_id, seq, queued_at)
      values ${sql.join(rows)}
      on conflict (node_id, kind, id) do update
        set seq = excluded.seq, org_id = excluded.org_id, queued_at = excluded.queued_at`,
  );
}
