// `pbxctl db copy`: an existing install's SQLite store copied into an empty PostgreSQL database,
// table by table, then verified. Both stores are migrated to this build's schema first, so the
// tables and columns are the same on both sides. Rows go in foreign-key order (a parent table
// before the tables that reference it), in batches; identity sequences then continue after the
// highest copied id. The check reads every table back from both stores through the same code:
// a row count and a checksum over the rows' values (order-free, so the two engines' collations
// cannot make equal tables differ), with instants compared as instants.
import { createHash } from "node:crypto";
import { type Kysely, sql } from "kysely";
import type { Db } from "./database.js";

/** One table's figures on both sides of a copy. */
export interface TableCopy {
  table: string;
  sourceRows: number;
  targetRows: number;
  sourceChecksum: string;
  targetChecksum: string;
}

export class StoreCopyError extends Error {
  override readonly name = "StoreCopyError";
}

// Kysely's own bookkeeping: each store keeps its own migration records. The realtime PJSIP tables
// (migration 2950) exist only on PostgreSQL and hold what the compiler derives from the store:
// the first realtime deploy writes them, so there is nothing to copy from SQLite.
const SKIPPED = /^(kysely_|ps_|pjsip_realtime_)/;

// Tables whose rows a migration writes itself (2401 starts the ticket poller's cursor): a freshly
// migrated target holds them, so they do not make it "not empty", and the source's rows replace
// them (the cursor must stay where the original install left it).
const SEEDED_BY_MIGRATIONS = new Set(["ticket_poller_state"]);

// PostgreSQL accepts at most 65535 bind parameters per statement.
const MAX_PARAMETERS = 60_000;

// biome-ignore lint/suspicious/noExplicitAny: tables are copied by name, whatever their type
type AnyDb = Kysely<any>;
type Row = Record<string, unknown>;

interface TableShape {
  name: string;
  columns: string[];
  /** Columns holding instants (timestamptz on the PostgreSQL side). */
  times: Set<string>;
  /** The generated id column, when the table has one. */
  identity: string | null;
}

/** The target's tables with their columns, parents before children. */
async function targetShapes(target: AnyDb): Promise<TableShape[]> {
  const { rows: columns } = await sql<{
    table_name: string;
    column_name: string;
    data_type: string;
    is_identity: string;
  }>`select table_name, column_name, data_type, is_identity from information_schema.columns
     where table_schema = current_schema() order by table_name, ordinal_position`.execute(target);
  const shapes = new Map<string, TableShape>();
  for (const c of columns) {
    if (SKIPPED.test(c.table_name)) continue;
    let shape = shapes.get(c.table_name);
    if (!shape) {
      shape = { name: c.table_name, columns: [], times: new Set(), identity: null };
      shapes.set(c.table_name, shape);
    }
    shape.columns.push(c.column_name);
    if (c.data_type.startsWith("timestamp")) shape.times.add(c.column_name);
    if (c.is_identity === "YES") shape.identity = c.column_name;
  }
  const { rows: links } = await sql<{ child: string; parent: string }>`
    select conrelid::regclass::text as child, confrelid::regclass::text as parent
    from pg_constraint where contype = 'f'`.execute(target);
  return parentsFirst([...shapes.values()], links);
}

function parentsFirst(
  shapes: TableShape[],
  links: readonly { child: string; parent: string }[],
): TableShape[] {
  const ordered: TableShape[] = [];
  const placed = new Set<string>();
  const visit = (shape: TableShape, path: Set<string>) => {
    if (placed.has(shape.name)) return;
    if (path.has(shape.name))
      throw new StoreCopyError(`foreign keys form a cycle at ${shape.name}`);
    path.add(shape.name);
    for (const link of links) {
      const parent = shapes.find((s) => s.name === link.parent);
      if (link.child === shape.name && parent && parent.name !== shape.name) visit(parent, path);
    }
    placed.add(shape.name);
    ordered.push(shape);
  };
  for (const shape of [...shapes].sort((a, b) => a.name.localeCompare(b.name))) {
    visit(shape, new Set());
  }
  return ordered;
}

async function countRows(db: AnyDb, table: string): Promise<number> {
  const row = await db
    .selectFrom(table)
    .select((eb) => eb.fn.countAll<number>().as("n"))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** Refuses a target holding any row: a copy never merges into existing data. */
async function assertEmpty(target: AnyDb, shapes: readonly TableShape[]): Promise<void> {
  for (const shape of shapes) {
    if (SEEDED_BY_MIGRATIONS.has(shape.name)) continue;
    const rows = await countRows(target, shape.name);
    if (rows > 0) {
      throw new StoreCopyError(
        `the target is not empty (${shape.name} has ${rows} rows): copy into a new database`,
      );
    }
  }
}

/** A value as the checksum sees it: instants as ISO instants, everything else as read. */
function canonical(value: unknown, isTime: boolean): unknown {
  if (value === null || value === undefined) return null;
  if (isTime && typeof value === "string") {
    const ms = Date.parse(value);
    return Number.isNaN(ms) ? value : new Date(ms).toISOString();
  }
  if (typeof value === "bigint") return Number(value);
  if (value instanceof Uint8Array) return Buffer.from(value).toString("base64");
  return value;
}

/**
 * Row count and checksum of `shape`'s table in `db`: the sum modulo 2^256 of each row's SHA-256
 * over its values in the shape's column order, so the order rows come back in does not matter.
 */
async function tableChecksum(
  db: AnyDb,
  shape: TableShape,
): Promise<{ rows: number; checksum: string }> {
  const modulus = 1n << 256n;
  let sum = 0n;
  let rows = 0;
  for await (const row of db
    .selectFrom(shape.name)
    .select(shape.columns)
    .stream(1000) as AsyncIterable<Row>) {
    const values = shape.columns.map((c) => canonical(row[c], shape.times.has(c)));
    const digest = createHash("sha256").update(JSON.stringify(values)).digest("hex");
    sum = (sum + BigInt(`0x${digest}`)) % modulus;
    rows++;
  }
  return { rows, checksum: sum.toString(16).padStart(64, "0") };
}

async function copyTable(source: AnyDb, target: AnyDb, shape: TableShape): Promise<void> {
  if (SEEDED_BY_MIGRATIONS.has(shape.name)) await target.deleteFrom(shape.name).execute();
  const batchSize = Math.max(1, Math.floor(MAX_PARAMETERS / shape.columns.length));
  let batch: Row[] = [];
  const flush = async () => {
    if (batch.length === 0) return;
    await target.insertInto(shape.name).values(batch).execute();
    batch = [];
  };
  for await (const row of source
    .selectFrom(shape.name)
    .select(shape.columns)
    .stream(1000) as AsyncIterable<Row>) {
    batch.push(row);
    if (batch.length >= batchSize) await flush();
  }
  await flush();
  if (shape.identity) {
    // The next generated id follows the highest copied one.
    await sql`select setval(pg_get_serial_sequence(${shape.name}, ${shape.identity}),
      coalesce((select max(${sql.ref(shape.identity)}) from ${sql.table(shape.name)}), 0) + 1, false)`.execute(
      target,
    );
  }
}

/**
 * Copies every table of `source` (SQLite) into `target` (PostgreSQL, migrated, empty) in one
 * transaction on the target, then verifies each table's count and checksum on both sides.
 * Throws a StoreCopyError when the target holds rows or a table differs after the copy.
 */
export async function copyStore(source: Db, target: Db): Promise<TableCopy[]> {
  const shapes = await targetShapes(target);
  const sourceTables = new Set(
    (await source.introspection.getTables()).map((t) => t.name).filter((n) => !SKIPPED.test(n)),
  );
  const missing = shapes.filter((s) => !sourceTables.has(s.name)).map((s) => s.name);
  const extra = [...sourceTables].filter((name) => !shapes.some((s) => s.name === name));
  if (missing.length > 0 || extra.length > 0) {
    throw new StoreCopyError(
      `the two schemas differ (only in the target: ${missing.join(", ") || "-"}; only in the source: ${extra.join(", ") || "-"})`,
    );
  }
  await assertEmpty(target, shapes);
  await target.transaction().execute(async (trx) => {
    for (const shape of shapes) await copyTable(source, trx, shape);
  });
  // Fresh statistics, so the planner knows the copied tables' sizes from the first request.
  await sql`analyze`.execute(target);
  const copies: TableCopy[] = [];
  for (const shape of shapes) {
    const before = await tableChecksum(source, shape);
    const after = await tableChecksum(target, shape);
    copies.push({
      table: shape.name,
      sourceRows: before.rows,
      targetRows: after.rows,
      sourceChecksum: before.checksum,
      targetChecksum: after.checksum,
    });
  }
  return copies;
}

/** True when every table arrived whole. */
export function copyIsExact(copies: readonly TableCopy[]): boolean {
  return copies.every(
    (c) => c.sourceRows === c.targetRows && c.sourceChecksum === c.targetChecksum,
  );
}
