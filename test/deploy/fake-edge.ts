// A stand-in for Kamailio 5.6's JSON-RPC over HTTP (jsonrpcs + xhttp, POST /RPC), answering the
// methods pbxctl uses with the shapes and messages the real edge gave in the cluster suite
// (test/cluster): htable.dump/sets/delete on the `orgs` and `dids` tables, dispatcher.list and
// dispatcher.reload, permissions.addressDump/subnetDump/addressReload, core.shmmem (the figures
// settable). Reloads read the data files
// in the edge directory, as Kamailio does, so a push that did not write them is caught; the
// carriers' table as db_text does: loaded at start when present, then re-read by addressReload
// only when the file's mtime is in a later whole second than the loaded one (dbt_check_mtime),
// so a rewrite the real edge would miss is missed here too. Reloads are rate-limited as
// Kamailio 5.6 limits them: a module's RPC reload within its reload_delta of the last one (whole
// seconds of `now`, the edge's clock: a test's fake timers) is refused with the module's own
// 500 fault, `Ongoing reload` (dispatcher) or `ongoing reload` (permissions). `down`
// makes it answer nothing (connection refused, as a stopped edge); `ignoreSets` drops
// htable.sets (an edge that does not take the change, caught by the read-back).
import { existsSync, readFileSync, statSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { EDGE_RELOAD_DELTA_S } from "../../src/compiler/edge/index.js";

interface Destination {
  set: number;
  uri: string;
  flags: number;
  attrs: string;
}

interface Carrier {
  ip: string;
  mask: number;
}

export interface FakeEdge {
  port: number;
  /** Every method called, with its parameters (`htable.sets orgs org_x_ 1`). */
  calls: string[];
  htables: Record<"orgs" | "dids", Map<string, string>>;
  /** Refuses connections until `up()`. */
  down(): Promise<void>;
  up(): Promise<void>;
  ignoreSets: boolean;
  /** What `core.shmmem` answers (the real edge's shape: test/cluster/edge-sync.test.ts). */
  shm: Record<string, number>;
  close(): Promise<void>;
}

/**
 * `core.shmmem` of a real Kamailio 5.6 started as `edge init` prints (`-x tlsf -m 256`), as
 * test/cluster/edge-sync.test.ts read it (the pool is 256 MiB less what tlsf keeps).
 */
export const REAL_SHMMEM = {
  total: 268435376,
  free: 265167216,
  used: 3250424,
  real_used: 3268160,
  max_used: 3269048,
  fragments: 1,
};

function readDispatcher(dir: string): Destination[] {
  return readFileSync(join(dir, "dispatcher.list"), "utf8")
    .split("\n")
    .filter((line) => line.trim() !== "" && !line.startsWith("#"))
    .map((line) => {
      const [set, uri, flags, , attrs] = line.split(" ");
      return { set: Number(set), uri: uri!, flags: Number(flags), attrs: attrs ?? "" };
    });
}

function readCarriers(dir: string): Carrier[] {
  return readFileSync(join(dir, "db", "address"), "utf8")
    .split("\n")
    .slice(1)
    .filter((line) => line !== "")
    .map((line) => {
      // id:grp:ip:mask:port:tag, with `\:` inside an IPv6 address.
      const columns = line.split(/(?<!\\):/).map((c) => c.replace(/\\:/g, ":"));
      return { ip: columns[2]!, mask: Number(columns[3]) };
    });
}

/** The address file's mtime as db_text compares it: whole seconds. */
function addressSecond(dir: string): number {
  return Math.floor(statSync(join(dir, "db", "address")).mtimeMs / 1000);
}

export interface FakeEdgeOptions {
  /** The edge's clock in epoch milliseconds (its `time()`); default the real one. */
  now?: () => number;
}

export async function startFakeEdge(dir: string, options: FakeEdgeOptions = {}): Promise<FakeEdge> {
  const now = options.now ?? Date.now;
  /** Second of each module's last RPC reload (Kamailio's `*_rpc_reload_time`); none at start. */
  const lastReload = { dispatcher: null as number | null, permissions: null as number | null };
  /** Kamailio's check: refused while `last > time(NULL) - reload_delta`; else the time is taken. */
  const rateLimit = (module: keyof typeof lastReload, fault: string) => {
    const second = Math.floor(now() / 1000);
    const last = lastReload[module];
    if (last !== null && last > second - EDGE_RELOAD_DELTA_S) throw { code: 500, message: fault };
    lastReload[module] = second;
  };
  const calls: string[] = [];
  const htables = { orgs: new Map<string, string>(), dids: new Map<string, string>() };
  let dispatcher: Destination[] = [];
  let carriers: Carrier[] = [];
  /** db_text's cached mtime of the loaded address table; null: none loaded yet. */
  let carriersSecond: number | null = null;
  if (existsSync(join(dir, "db", "address"))) {
    carriersSecond = addressSecond(dir);
    carriers = readCarriers(dir);
  }
  const edge = { ignoreSets: false, shm: { ...REAL_SHMMEM } };

  const answer = (method: string, params: unknown[]): unknown => {
    calls.push(params.length > 0 ? `${method} ${params.join(" ")}` : method);
    const table = htables[String(params[0]) as "orgs" | "dids"];
    switch (method) {
      case "htable.dump":
        if (!table) throw { code: 500, message: "No such htable" };
        return [...table].map(([name, value], entry) => ({
          entry,
          size: 1,
          slot: [{ name, value, type: "str" }],
        }));
      case "htable.sets":
        if (!table) throw { code: 500, message: "No such htable" };
        if (!edge.ignoreSets) table.set(String(params[1]), String(params[2]));
        return "Ok. Key set to new value.";
      case "htable.delete":
        if (!table) throw { code: 500, message: "No such htable" };
        table.delete(String(params[1]));
        return "Ok. Key deleted.";
      case "dispatcher.list": {
        if (dispatcher.length === 0) throw { code: 500, message: "No Destination Sets" };
        const sets = [...new Set(dispatcher.map((d) => d.set))].sort((a, b) => a - b);
        return {
          NRSETS: sets.length,
          RECORDS: sets.map((id) => ({
            SET: {
              ID: id,
              TARGETS: dispatcher
                .filter((d) => d.set === id)
                .map((d) => ({
                  DEST: {
                    URI: d.uri,
                    FLAGS: d.flags === 4 ? "DX" : "AP",
                    PRIORITY: 0,
                    ATTRS: { BODY: d.attrs },
                  },
                })),
            },
          })),
        };
      }
      case "dispatcher.reload":
        rateLimit("dispatcher", "Ongoing reload");
        dispatcher = readDispatcher(dir);
        return "Ok. Dispatcher successfully reloaded.";
      case "permissions.addressDump":
        return carriers
          .filter((c) => c.mask === (c.ip.includes(":") ? 128 : 32))
          .map((c) => ({ table: 1, group: 1, item: { ip: c.ip, port: 0, tag: "carrier" } }));
      case "permissions.subnetDump":
        return carriers
          .filter((c) => c.mask !== (c.ip.includes(":") ? 128 : 32))
          .map((c, id) => ({
            id,
            group: 1,
            item: { ip: c.ip, mask: c.mask, port: 0, tag: "carrier" },
          }));
      case "permissions.addressReload": {
        rateLimit("permissions", "ongoing reload");
        const second = addressSecond(dir);
        if (carriersSecond === null || second > carriersSecond) {
          carriersSecond = second;
          carriers = readCarriers(dir);
        }
        return "Reload OK";
      }
      case "core.shmmem":
        return { ...edge.shm };
      default:
        throw { code: 500, message: "Method Not Found" };
    }
  };

  const handler = (
    request: import("node:http").IncomingMessage,
    response: import("node:http").ServerResponse,
  ) => {
    let body = "";
    request.on("data", (chunk) => {
      body += chunk;
    });
    request.on("end", () => {
      const call = JSON.parse(body) as { method: string; params?: unknown[]; id: number };
      let reply: object;
      try {
        reply = { jsonrpc: "2.0", result: answer(call.method, call.params ?? []), id: call.id };
      } catch (error) {
        reply = { jsonrpc: "2.0", error, id: call.id };
      }
      response.writeHead(200, { "content-type": "application/json" });
      response.end(JSON.stringify(reply));
    });
  };

  let server: Server | null = null;
  let port = 0;
  const listen = async () => {
    const next = createServer(handler);
    await new Promise<void>((resolve) => next.listen(port, "127.0.0.1", resolve));
    port = (next.address() as AddressInfo).port;
    server = next;
  };
  const stop = async () => {
    const current = server;
    server = null;
    if (!current) return;
    current.closeAllConnections();
    await new Promise<void>((resolve) => current.close(() => resolve()));
  };
  await listen();
  return {
    get port() {
      return port;
    },
    calls,
    htables,
    down: stop,
    up: listen,
    get ignoreSets() {
      return edge.ignoreSets;
    },
    set ignoreSets(value: boolean) {
      edge.ignoreSets = value;
    },
    shm: edge.shm,
    close: stop,
  };
}

/** The edge's listen settings for tables built in a test: an edge that is never started. */
export const EDGE_LISTEN = {
  sip_address: "127.0.0.10",
  sip_port: 5060,
  rpc_port: 5081,
  data_dir: "/unused",
  probe_interval: 10,
};
