// Call events survive a PostgreSQL restart during ingest (run with --pg): a cluster of its own is
// shut down while events arrive and started again; the ingest holds what the store could not
// take and stores every event once, in the engine's order, when it is back. Real timers: the
// backoff waits for a real server.
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { startCallTracking } from "../../src/api/call-tracking.js";
import { type CallIngestInstruments, noInstruments } from "../../src/metrics/instruments.js";
import { openStore } from "../../src/store/database.js";
import {
  type PostgresCluster,
  startPostgresCluster,
} from "../../src/store/testing/postgres-cluster.js";
import { insertOrg } from "../store/helpers.js";
import { testPostgresUrl } from "../store/test-database.js";
import { cdrEvent, ORG_A } from "./fixture-events.js";

const test = suite("call ingest through a PostgreSQL restart");

if (testPostgresUrl()) {
  test("the database restarts during ingest: every event is stored once, in order", async () => {
    const cluster: PostgresCluster = await startPostgresCluster();
    try {
      await cluster.admin("CREATE DATABASE ingest");
      const db = await openStore({ kind: "postgres", url: cluster.url("ingest"), poolSize: 4 });
      try {
        await insertOrg(db, ORG_A, "Acme", `org_${ORG_A}_`);
        const outage: boolean[] = [];
        let began = () => {};
        const outageBegan = new Promise<void>((resolve) => {
          began = resolve;
        });
        const calls: CallIngestInstruments = {
          ...noInstruments.calls,
          storeUnavailable(holding) {
            outage.push(holding);
            if (holding) began();
          },
        };
        const dropped: [string, number][] = [];
        calls.dropped = (reason, count) => dropped.push([reason, count]);
        const tracking = startCallTracking({
          db,
          clock: () => new Date("2026-11-27T10:00:00Z"),
          batch: { maxBatch: 50, maxDelayMs: 10 },
          instruments: { calls, ami: noInstruments.ami("events") },
        });
        const fed: string[] = [];
        const feed = (count: number) => {
          for (let i = 0; i < count; i++) {
            const id = `1700000000.${fed.length + 1}`;
            fed.push(id);
            tracking.feed(cdrEvent(id));
          }
        };
        try {
          feed(120);
          await tracking.idle();
          // The server goes down (a fast shutdown: sessions are terminated, new ones refused)
          // while events keep coming.
          process.kill(cluster.pid, "SIGINT");
          feed(80);
          await outageBegan;
          feed(80);
          await cluster.restart();
          feed(80);
          await tracking.idle();
        } finally {
          await tracking.stop();
        }
        const stored = (
          await db.selectFrom("call_records").select("uniqueid").orderBy("id").execute()
        ).map((row) => row.uniqueid);
        assert.is(stored.length, fed.length, "every event stored, none twice");
        assert.equal(stored, fed, "in the engine's order");
        assert.equal(outage, [true, false], "the ingest held events through the outage");
        assert.equal(dropped, [], "nothing dropped");
      } finally {
        await db.destroy();
      }
    } finally {
      await cluster.stop();
    }
  });
}

test.run();
