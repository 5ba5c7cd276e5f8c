// Fakes of realtime PJSIP's two sides (src/deploy/realtime-pjsip.ts) for the fast suite: the
// store's rows and pending queue, which fail while a test says the store is down, and an engine
// that takes expiries (or refuses them while down) and serves exactly the endpoints written.
import type { RealtimeRows } from "../../src/deploy/realtime-pjsip.js";
import type { EngineProbe, EngineTarget } from "../../src/engine/target.js";
import type {
  PendingKind,
  PendingPjsipObject,
  PjsipRowChange,
} from "../../src/store/pjsip-realtime-repository.js";

const KIND: Record<string, PendingKind> = {
  ps_auths: "auth",
  ps_aors: "aor",
  ps_endpoints: "endpoint",
};

/** The store's realtime tables and pending queue; down (every call throws) while `down` is set. */
export class FakeRealtimeStore implements RealtimeRows {
  down: string | null = null;
  readonly rows = new Map<string, Readonly<Record<string, string>>>();
  private queue: PendingPjsipObject[] = [];
  private seq = 0;

  private reachable(): void {
    if (this.down) throw new Error(this.down);
  }

  async replaceOrgRows(options: Parameters<RealtimeRows["replaceOrgRows"]>[0]) {
    this.reachable();
    const changes: PjsipRowChange[] = [];
    for (const row of options.rows) {
      const key = `${row.table}/${row.id}`;
      if (JSON.stringify(this.rows.get(key)) === JSON.stringify(row.columns)) continue;
      changes.push({
        table: row.table as PjsipRowChange["table"],
        id: row.id,
        change: this.rows.has(key) ? "changed" : "added",
      });
      this.rows.set(key, row.columns);
      this.queue.push({
        nodeId: "",
        kind: KIND[row.table]!,
        id: row.id,
        orgId: options.orgId,
        seq: ++this.seq,
        queuedAt: options.at,
      });
    }
    return changes;
  }

  async removeRowsOutside(): Promise<PjsipRowChange[]> {
    throw new Error("not used here");
  }

  async queueOrgForNode(): Promise<number> {
    throw new Error("not used here");
  }

  async pending(options: { orgId?: string; nodeId?: string } = {}): Promise<PendingPjsipObject[]> {
    this.reachable();
    return this.queue.filter(
      (o) =>
        (options.orgId === undefined || o.orgId === options.orgId) &&
        (options.nodeId === undefined || o.nodeId === options.nodeId),
    );
  }

  /** The rows under `prefix` that differ from `rows`: added, changed, or no longer compiled. */
  async unwrittenRows(options: Parameters<RealtimeRows["unwrittenRows"]>[0]) {
    this.reachable();
    const changes: PjsipRowChange[] = [];
    const compiled = new Set<string>();
    for (const row of options.rows) {
      const key = `${row.table}/${row.id}`;
      compiled.add(key);
      const stored = this.rows.get(key);
      if (JSON.stringify(stored) === JSON.stringify(row.columns)) continue;
      const table = row.table as PjsipRowChange["table"];
      changes.push({ table, id: row.id, change: stored ? "changed" : "added" });
    }
    for (const key of this.rows.keys()) {
      const [table, id] = key.split("/") as [PjsipRowChange["table"], string];
      if (id.startsWith(options.prefix) && !compiled.has(key)) {
        changes.push({ table, id, change: "removed" });
      }
    }
    return changes;
  }

  async acknowledge(objects: readonly Pick<PendingPjsipObject, "kind" | "id" | "seq">[]) {
    this.reachable();
    const taken = new Set(objects.map((o) => `${o.kind}/${o.id}/${o.seq}`));
    this.queue = this.queue.filter((o) => !taken.has(`${o.kind}/${o.id}/${o.seq}`));
  }

  async existing(table: string, ids: readonly string[]): Promise<Set<string>> {
    this.reachable();
    return new Set(ids.filter((id) => this.rows.has(`${table}/${id}`)));
  }
}

/** An engine that takes every expiry (or refuses them while `down`) and serves what is written. */
export function fakeRealtimeEngine(store: FakeRealtimeStore) {
  const expired: string[] = [];
  let down = false;
  const target: EngineTarget = {
    kind: "ami",
    reload: () => Promise.reject(new Error("no reload expected")),
    health: () => Promise.resolve({ status: "healthy", checkedAt: new Date().toISOString() }),
    close: () => Promise.resolve(),
    async expireCachedObject(cache, id) {
      if (down) throw new Error("AMI connection closed");
      expired.push(`${cache} ${id}`);
      return "expired";
    },
    // Serves exactly the endpoints whose rows are written: contradicts no probe.
    async verify(probes: readonly EngineProbe[]) {
      return probes.filter((p) => p.present !== store.rows.has(`ps_endpoints/${p.name}`));
    },
  };
  return {
    target,
    expired,
    setDown(value: boolean) {
      down = value;
    },
  };
}
