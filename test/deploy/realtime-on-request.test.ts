// An on-request deploy in realtime PJSIP mode answers what happened to the org's rows
// (src/deploy/store-deploys.ts `deployOrgNow`, docs/engine.md "On-request deploys"): rows the
// store could not write, or changes the engine has not taken, fail the deploy (502 with what is
// owed) instead of answering `ok` while they wait for a retry; and `GET /config/status` says the
// org is not live while they are owed (`realtime_pending`, src/deploy/realtime-status.ts), for
// the caller's org only. `POST /config/deploy` through the API, over a fake realtime store that
// fails while the test says so and a fake engine; the retries run on injected timers that never
// move here, so what the deploy itself did is seen.
import { test } from "uvu";
import * as assert from "uvu/assert";
import type { RealtimeRow } from "../../src/compiler/pjsip-realtime.js";
import { RealtimePjsip } from "../../src/deploy/realtime-pjsip.js";
import { ReloadQueue } from "../../src/deploy/reload-queue.js";
import { StoreBuilds } from "../../src/deploy/store-builds.js";
import { StoreDeploys } from "../../src/deploy/store-deploys.js";
import type { Db } from "../../src/store/database.js";
import { startTestApp, type TestApp } from "../api/helpers.js";
import { FakeRealtimeStore, fakeRealtimeEngine } from "./fake-realtime.js";
import { FakeClock, type Rig, rig } from "./helpers.js";

const GATEWAY = { environment: "prod", staging_endpoint: "staging-tunnel" } as const;

/** The org's rows as the compiler would give them: one phone, `<prefix>2001`. */
async function phoneRows(db: Db, orgId: string) {
  const org = await db
    .selectFrom("organizations")
    .select("context_prefix")
    .where("id", "=", orgId)
    .executeTakeFirst();
  if (!org) return null;
  const id = `${org.context_prefix}2001`;
  const rows: RealtimeRow[] = [
    { table: "ps_auths", id, columns: { id, username: id } },
    { table: "ps_aors", id, columns: { id } },
    { table: "ps_endpoints", id, columns: { id, auth: id, aors: id } },
  ];
  return { prefix: org.context_prefix, rows };
}

interface Context {
  app: TestApp;
  store: FakeRealtimeStore;
  engine: ReturnType<typeof fakeRealtimeEngine>;
  realtime: () => RealtimePjsip;
  deploy: (apiKey: string) => ReturnType<TestApp["request"]>;
  status: (apiKey: string) => ReturnType<TestApp["request"]>;
}

async function withRealtimeServer(run: (context: Context) => Promise<void>): Promise<void> {
  const store = new FakeRealtimeStore();
  const engine = fakeRealtimeEngine(store);
  const clock = new FakeClock();
  const files: Rig = await rig();
  let realtime: RealtimePjsip | null = null;
  const app = await startTestApp({
    configDeploys: (db) => {
      realtime = new RealtimePjsip({
        db,
        builds: { orgPjsipRows: (orgId) => phoneRows(db, orgId) },
        rows: store,
        target: engine.target,
        reloads: new ReloadQueue(engine.target),
        timers: clock,
      });
      return new StoreDeploys({
        builds: new StoreBuilds({ db, gateway: GATEWAY }),
        deployer: files.deployer,
        pjsipRows: realtime,
        timers: clock,
      });
    },
  });
  try {
    await run({
      app,
      store,
      engine,
      realtime: () => realtime!,
      deploy: (apiKey) =>
        app.request("POST", "/api/v1/config/deploy", { headers: { "x-api-key": apiKey } }),
      status: (apiKey) =>
        app.request("GET", "/api/v1/config/status", { headers: { "x-api-key": apiKey } }),
    });
  } finally {
    await realtime!.stop();
    await app.close();
    await files.close();
  }
}

test("rows the store could not write: the deploy fails with what is owed, not `ok`", () =>
  withRealtimeServer(async ({ app, store, realtime, deploy }) => {
    const org = await app.createOrg("A");
    store.down = "Connection terminated unexpectedly";
    const failed = await deploy(org.api_key);
    assert.is(failed.status, 502, failed.text);
    assert.equal(failed.body, {
      error: "Deploy failed: realtime PJSIP rows not written: Connection terminated unexpectedly",
    });
    assert.is(store.rows.size, 0);
    assert.equal(realtime().owed(), { unwrittenOrgs: [org.id], engineOwed: false });

    // The store is back: the next on-request deploy writes the rows itself and answers 200.
    store.down = null;
    const ok = await deploy(org.api_key);
    assert.is(ok.status, 200, ok.text);
    assert.is(store.rows.size, 3);
    assert.is(realtime().owed(), null);
  }));

test("changes the engine has not taken: the deploy fails; once it is back, a deploy tells it at once", () =>
  withRealtimeServer(async ({ app, store, engine, realtime, deploy }) => {
    const org = await app.createOrg("A");
    engine.setDown(true);
    const failed = await deploy(org.api_key);
    assert.is(failed.status, 502, failed.text);
    assert.equal(failed.body, {
      error:
        "Deploy failed: realtime PJSIP changes not taken by the engine yet: AMI connection closed",
    });
    assert.is(store.rows.size, 3, "the rows are written");
    assert.is((await realtime().pending()).length, 3);

    // No row changes now, and the retry's timer has not run: the deploy itself tells the engine.
    engine.setDown(false);
    const ok = await deploy(org.api_key);
    assert.is(ok.status, 200, ok.text);
    assert.is(engine.expired.length, 3);
    assert.equal(await realtime().pending(), []);
    assert.is(realtime().owed(), null);
  }));

/** The status's liveness and what realtime PJSIP owes, as the API answers them. */
async function liveness(answer: ReturnType<Context["status"]>) {
  const res = await answer;
  assert.is(res.status, 200, res.text);
  return { live: res.body.live, realtime_pending: res.body.realtime_pending };
}

test("GET /config/status: rows not written make the org not live, and only that org", () =>
  withRealtimeServer(async ({ app, store, deploy, status }) => {
    const a = await app.createOrg("A");
    const b = await app.createOrg("B");
    assert.is((await deploy(b.api_key)).status, 200);
    assert.equal(await liveness(status(b.api_key)), {
      live: true,
      realtime_pending: { unwritten: 0, not_taken: 0 },
    });

    // A's save committed; its rows' write failed and waits for a retry (the store is back).
    store.down = "Connection terminated unexpectedly";
    assert.is((await deploy(a.api_key)).status, 502);
    store.down = null;
    const owedA = await status(a.api_key);
    assert.equal(
      { live: owedA.body.live, realtime_pending: owedA.body.realtime_pending },
      { live: false, realtime_pending: { unwritten: 3, not_taken: 0 } },
    );
    assert.is(
      owedA.body.applied_revision,
      owedA.body.desired_revision,
      "the files are live: only the rows are owed",
    );
    assert.equal(await liveness(status(b.api_key)), {
      live: true,
      realtime_pending: { unwritten: 0, not_taken: 0 },
    });

    assert.is((await deploy(a.api_key)).status, 200);
    assert.equal(await liveness(status(a.api_key)), {
      live: true,
      realtime_pending: { unwritten: 0, not_taken: 0 },
    });
  }));

test("GET /config/status: changes the engine has not taken make the org not live, and only that org", () =>
  withRealtimeServer(async ({ app, engine, deploy, status }) => {
    const a = await app.createOrg("A");
    const b = await app.createOrg("B");
    assert.is((await deploy(b.api_key)).status, 200);
    engine.setDown(true);
    assert.is((await deploy(a.api_key)).status, 502);
    assert.equal(await liveness(status(a.api_key)), {
      live: false,
      realtime_pending: { unwritten: 0, not_taken: 3 },
    });
    assert.equal(await liveness(status(b.api_key)), {
      live: true,
      realtime_pending: { unwritten: 0, not_taken: 0 },
    });

    engine.setDown(false);
    assert.is((await deploy(a.api_key)).status, 200);
    assert.equal(await liveness(status(a.api_key)), {
      live: true,
      realtime_pending: { unwritten: 0, not_taken: 0 },
    });
  }));

test.run();
