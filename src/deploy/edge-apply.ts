// Changes to a running Kamailio edge without a restart (issue 26 step 3). The edge's data files
// are written first (atomically: a restarted edge loads what was applied), then the running
// tables are brought to them over JSON-RPC and read back; a change is applied only when the
// read-back equals what was compiled, the engine deployer's "applied only when verified" rule.
// - org and DID tables: only the keys that differ, `htable.sets` / `htable.delete` (no moment
//   where a table is empty, as a reload from the files would risk);
// - nodes (dispatcher) and carriers (permissions): `dispatcher.reload` / `permissions.addressReload`
//   from the files, only when the running list differs (a dispatcher reload forgets which nodes
//   probing found down, so it is not done for nothing); one Kamailio refuses as too soon after
//   the last is waited out and retried (src/deploy/edge-reload.ts).
// The carriers' table is a db_text file, and db_text (db_mode=1) re-reads a table only when the
// file's mtime, in whole seconds, is later than the one it loaded (dbt_check_mtime in Kamailio's
// db_text/dbt_file.c): a carrier change written within the same second as the version the edge
// loaded would be ignored by addressReload, the edge keeping the old carriers (the cluster suite
// failed so whenever its first push came in the edge's starting second). So the address file,
// when it changes or is about to be reloaded, is written in a later second than the old file.
import { readFile, stat } from "node:fs/promises";
import { join } from "node:path";
import { writeFileAtomic } from "../atomic-files.js";
import { EDGE_DATA_FILES, type EdgeTables, printEdgeData } from "../compiler/edge/index.js";
import { type EdgeReloadOptions, reloadEdge } from "./edge-reload.js";
import { type EdgeRpc, EdgeRpcError } from "./edge-rpc.js";

export type { EdgeReloadOptions } from "./edge-reload.js";
export { type EdgeRpc, EdgeRpcError, type EdgeRpcFault, httpEdgeRpc } from "./edge-rpc.js";

/** The edge did not end up with the compiled tables: which table differs, and how. */
export class EdgeNotApplied extends Error {
  override readonly name = "EdgeNotApplied";
}

/** What one apply changed. */
export interface EdgeApplyResult {
  orgKeysChanged: number;
  didKeysChanged: number;
  dispatcherReloaded: boolean;
  carriersReloaded: boolean;
}

/**
 * Writes the data files to `dataDir`, brings the running edge to them, reads every table back.
 * A reload the edge refuses as rate-limited is retried once its reload_delta has passed
 * (`options`: the timers it waits on, and more: src/deploy/edge-reload.ts).
 */
export async function applyEdgeTables(
  rpc: EdgeRpc,
  dataDir: string,
  tables: EdgeTables,
  options: EdgeReloadOptions = {},
): Promise<EdgeApplyResult> {
  const address = join(dataDir, EDGE_DATA_FILES.address);
  let addressContent = "";
  let addressWritten = false;
  for (const file of printEdgeData(tables)) {
    const path = join(dataDir, file.path);
    if (path === address) {
      addressContent = file.content;
      addressWritten = await writeReloadedDbText(path, file.content, false);
    } else {
      await writeFileAtomic(path, file.content);
    }
  }
  // Nodes first, so a new node's set exists before an org entry names it.
  const dispatcherReloaded = !sameDispatcher(await readDispatcher(rpc), tables);
  if (dispatcherReloaded) await reloadEdge(rpc, "dispatcher.reload", options);
  const carriersReloaded = !sameCarriers(await readCarriers(rpc), tables);
  if (carriersReloaded) {
    // The file already says so but the edge does not: it missed an earlier rewrite.
    if (!addressWritten) await writeReloadedDbText(address, addressContent, true);
    await reloadEdge(rpc, "permissions.addressReload", options);
  }
  const orgKeysChanged = await syncHtable(rpc, "orgs", tables.orgs);
  const didKeysChanged = await syncHtable(rpc, "dids", tables.dids);
  await verifyEdge(rpc, tables);
  return { orgKeysChanged, didKeysChanged, dispatcherReloaded, carriersReloaded };
}

/**
 * Writes a db_text table the edge reloads over RPC so that the reload cannot miss it: when the
 * content changed, or `force` (the edge is about to reload it and holds something else, so it
 * missed an earlier same-second rewrite, or the file was edited by hand), the file gets an mtime
 * in a later whole second than the file it replaces; ahead of the clock only while such writes
 * come faster than one a second, which carrier changes, made by hand, do not. Otherwise the file
 * is left alone. Returns whether it was written.
 */
async function writeReloadedDbText(path: string, content: string, force: boolean) {
  const old = await stat(path).catch((error: NodeJS.ErrnoException) => {
    if (error.code === "ENOENT") return null;
    throw error;
  });
  if (old === null) {
    await writeFileAtomic(path, content);
    return true;
  }
  if (!force && (await readFile(path, "utf8")) === content) return false;
  await writeFileAtomic(path, content, { minMtimeMs: (Math.floor(old.mtimeMs / 1000) + 1) * 1000 });
  return true;
}

/** Reads every table back from the running edge; throws EdgeNotApplied on the first difference. */
export async function verifyEdge(rpc: EdgeRpc, tables: EdgeTables): Promise<void> {
  for (const [name, want] of [
    ["orgs", tables.orgs],
    ["dids", tables.dids],
  ] as const) {
    const difference = mapDifference(await readHtable(rpc, name), want);
    if (difference) throw new EdgeNotApplied(`edge table ${name}: ${difference}`);
  }
  if (!sameDispatcher(await readDispatcher(rpc), tables)) {
    throw new EdgeNotApplied("edge dispatcher list differs from the compiled nodes");
  }
  if (!sameCarriers(await readCarriers(rpc), tables)) {
    throw new EdgeNotApplied("edge carrier addresses differ from the compiled ones");
  }
}

async function syncHtable(
  rpc: EdgeRpc,
  table: "orgs" | "dids",
  want: ReadonlyMap<string, string>,
): Promise<number> {
  const have = await readHtable(rpc, table);
  let changed = 0;
  for (const [key, value] of want) {
    if (have.get(key) === value) continue;
    await rpc("htable.sets", [table, key, value]);
    changed += 1;
  }
  for (const key of have.keys()) {
    if (want.has(key)) continue;
    await rpc("htable.delete", [table, key]);
    changed += 1;
  }
  return changed;
}

interface HtableDumpSlot {
  name: string;
  value: string | number;
}

/** `htable.dump`: slots of entries; every value the edge holds is a string. */
export async function readHtable(rpc: EdgeRpc, table: string): Promise<Map<string, string>> {
  const dump = (await rpc("htable.dump", [table])) as Array<{ slot?: HtableDumpSlot[] }> | null;
  const entries = new Map<string, string>();
  for (const bucket of dump ?? []) {
    for (const slot of bucket.slot ?? []) entries.set(slot.name, String(slot.value));
  }
  return entries;
}

function mapDifference(
  have: ReadonlyMap<string, string>,
  want: ReadonlyMap<string, string>,
): string | null {
  for (const [key, value] of want) {
    if (have.get(key) !== value) {
      return `${key} is ${have.get(key) ?? "absent"}, compiled ${value}`;
    }
  }
  for (const key of have.keys()) if (!want.has(key)) return `${key} is present, compiled absent`;
  return null;
}

/** Set id, URI, node name and whether disabled, sorted: what the dispatcher list says. */
async function readDispatcher(rpc: EdgeRpc): Promise<string[]> {
  const list = (await rpc("dispatcher.list").catch((error: unknown) => {
    // What Kamailio answers for an empty list file (an install with no node yet).
    if (error instanceof EdgeRpcError && error.message.endsWith(" No Destination Sets")) {
      return null;
    }
    throw error;
  })) as {
    RECORDS?: Array<{
      SET: {
        ID: number;
        TARGETS: Array<{ DEST: { URI: string; FLAGS: string; ATTRS?: { BODY?: string } } }>;
      };
    }>;
  } | null;
  const rows: string[] = [];
  for (const record of list?.RECORDS ?? []) {
    for (const target of record.SET.TARGETS) {
      const disabled = target.DEST.FLAGS.startsWith("D");
      rows.push(`${record.SET.ID} ${target.DEST.URI} ${target.DEST.ATTRS?.BODY ?? ""} ${disabled}`);
    }
  }
  return rows.sort();
}

function sameDispatcher(have: readonly string[], tables: EdgeTables): boolean {
  const want = tables.dispatcher
    .map((entry) => `${entry.set} ${entry.uri} node=${entry.node} ${entry.flags === 4}`)
    .sort();
  return have.length === want.length && have.every((row, index) => row === want[index]);
}

/** Exact addresses (`addressDump`) and ranges (`subnetDump`) of the carriers' group, sorted. */
async function readCarriers(rpc: EdgeRpc): Promise<string[]> {
  type Item = { item: { ip: string; mask?: number } };
  const exact = ((await rpc("permissions.addressDump")) ?? []) as Item[];
  const ranges = ((await rpc("permissions.subnetDump")) ?? []) as Item[];
  return [
    ...exact.map(({ item }) => `${item.ip}/${item.ip.includes(":") ? 128 : 32}`),
    ...ranges.map(({ item }) => `${item.ip}/${item.mask}`),
  ].sort();
}

function sameCarriers(have: readonly string[], tables: EdgeTables): boolean {
  const want = tables.carriers.map((carrier) => `${carrier.ip}/${carrier.mask}`).sort();
  return have.length === want.length && have.every((row, index) => row === want[index]);
}
