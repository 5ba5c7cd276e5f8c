// The server as it runs: real store, real scheduler (fake clock), real deployer, fake AMI engine.
import { rmSync } from "node:fs";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { StoreDeployLog } from "../../src/deploy/store-deploy-log.js";
import { storeUnitStatuses } from "../../src/deploy/store-status.js";
import { encodeWav } from "../../src/tts/wav.js";
import { insertDid, insertUser, sipUser, withRig } from "./helpers.js";

const TOP = ["extensions.conf", "musiconhold.conf", "pjsip.conf", "queues.conf", "voicemail.conf"];

test("a fresh data dir gets a complete engine directory and /health reports engine, store and roles", () =>
  withRig({}, async (rig) => {
    for (const file of [...TOP, "gateway/extensions.conf"]) {
      assert.ok(rig.read(file) !== null, `${file} missing`);
    }
    assert.match(rig.read("extensions.conf")!, /#include "gateway\/extensions.conf"/);
    const health = await rig.request("GET", "/health");
    assert.equal(health.body, {
      status: "ok",
      store: "ok",
      engine: "files-only",
      database: "sqlite",
      replica: rig.running.roles.replicaId,
      // A lone server holds every role. By kind only: /health answers anyone.
      roles: ["deployer", "ticket-poller", "retention"],
      media: { sounds: "ok", recordings: "ok" },
    });
  }));

test("start-up deploys every active org and the include files name it; a restart changes nothing", () =>
  withRig({ ami: true }, async (rig) => {
    const org = await rig.createOrg();
    await insertUser(rig.db, org.id, sipUser(org.prefix, "100"));
    // Restart without letting the scheduler run: start-up must bring the org in by itself.
    await rig.restart();
    assert.match(rig.read(`orgs/${org.prefix}/pjsip.conf`)!, new RegExp(`\\[${org.prefix}100\\]`));
    for (const file of TOP) assert.match(rig.read(file)!, new RegExp(`orgs/${org.prefix}/${file}`));
    const health = await rig.request("GET", "/health");
    assert.is(health.body.engine, "connected");

    rig.takeReloads();
    await rig.restart();
    assert.equal(rig.takeReloads(), [], "an unchanged restart reloads nothing");
    const records = await new StoreDeployLog(rig.db).recent({ limit: 10 });
    const startup = records.filter((r) => r.trigger === "startup").slice(0, 3);
    assert.ok(startup.length === 3 && startup.every((r) => r.result === "unchanged"));
    assert.ok(startup.every((r) => r.filesWritten.length === 0));
  }));

test("a start-up deploy in several batches: every batch written, then each module reloaded once for all", () =>
  withRig({ ami: true, startupBatchSize: 1 }, async (rig) => {
    const orgs = [
      await rig.createOrg("One"),
      await rig.createOrg("Two"),
      await rig.createOrg("Three"),
    ];
    for (const org of orgs) await insertUser(rig.db, org.id, sipUser(org.prefix, "100"));
    await rig.advance(6000);
    // An empty engine directory, as on a new engine node: start-up writes every org again.
    rmSync(rig.engineDir, { recursive: true, force: true });
    rig.takeReloads();
    await rig.restart();
    // Three batches of one org, one reload of each module: a reload costs what the engine holds
    // (83 s for res_pjsip at 1,000 orgs), so one per batch would cost ~5x one.
    const reloads = rig.takeReloads();
    assert.ok(reloads.includes("dialplan reload"), reloads.join(", "));
    assert.equal(
      reloads.filter((command, i) => reloads.indexOf(command) !== i),
      [],
      `each reload once: ${reloads.join(", ")}`,
    );
    const records = await new StoreDeployLog(rig.db).recent({ limit: 50 });
    const startup = records.filter((r) => r.trigger === "startup");
    assert.equal(
      startup.filter((r) => r.result === "failed").map((r) => `${r.unit}: ${r.error}`),
      [],
    );
    for (const org of orgs) {
      assert.ok(
        startup.some((r) => r.unit === `org:${org.prefix}` && r.result === "ok"),
        `${org.prefix} deployed at start-up`,
      );
      for (const file of TOP) assert.match(rig.read(file)!, `orgs/${org.prefix}/${file}`);
    }
  }));

test("an API save answers before the deploy; after the debounce the files change with one dialplan reload", () =>
  withRig({ ami: true }, async (rig) => {
    const org = await rig.createOrg();
    await rig.advance(1000);
    const before = rig.read(`orgs/${org.prefix}/extensions.conf`);
    assert.ok(before !== null, "the new org is deployed");
    rig.takeReloads();

    const res = await rig.request("PUT", `/api/v1/organizations/${org.id}`, {
      headers: { "x-api-key": org.api_key },
      body: { settings: { max_concurrent_calls: 7 } },
    });
    assert.is(res.status, 200, res.text);
    // Answered, and nothing deployed yet: the deploy waits for the debounce.
    assert.is(rig.read(`orgs/${org.prefix}/extensions.conf`), before);
    assert.equal(rig.takeReloads(), []);

    await rig.advance(799);
    assert.is(rig.read(`orgs/${org.prefix}/extensions.conf`), before, "not before 800 ms");
    await rig.advance(1);
    const after = rig.read(`orgs/${org.prefix}/extensions.conf`)!;
    assert.is.not(after, before);
    assert.match(after, /7/);
    assert.equal(rig.takeReloads(), ["dialplan reload"]);
  }));

test("50 edits in 2 s cause one reload of each touched module", () =>
  withRig({ ami: true }, async (rig) => {
    const org = await rig.createOrg();
    await rig.advance(1000);
    rig.takeReloads();
    const deploys = rig.running.engine!.deploys;
    for (let i = 0; i < 50; i++) {
      await insertUser(rig.db, org.id, sipUser(org.prefix, String(200 + i)));
      deploys.scheduleDeploy(org.id);
      await rig.advance(40); // 50 x 40 ms = 2 s
    }
    await rig.advance(5000);
    assert.match(rig.read(`orgs/${org.prefix}/pjsip.conf`)!, new RegExp(`${org.prefix}249`));
    const reloads = rig.takeReloads();
    assert.is(reloads.filter((c) => c === "dialplan reload").length, 1, reloads.join(", "));
    assert.is(reloads.filter((c) => c === "module reload res_pjsip.so").length, 1);
    assert.is(reloads.length, 2, reloads.join(", "));
  }));

test("POST /config/deploy deploys now and says what changed; an unchanged redeploy writes and reloads nothing", () =>
  withRig({ ami: true }, async (rig) => {
    const org = await rig.createOrg();
    await insertUser(rig.db, org.id, sipUser(org.prefix, "100"));
    rig.takeReloads();
    const headers = { "x-api-key": org.api_key };

    const first = await rig.request("POST", "/api/v1/config/deploy", { headers });
    assert.is(first.status, 200, first.text);
    assert.is(first.body.result, "ok");
    assert.ok(first.body.files_written.includes(`orgs/${org.prefix}/pjsip.conf`));
    assert.ok(first.body.reloads.some((r: { command: string }) => r.command === "dialplan reload"));
    assert.is(first.body.health, "healthy");
    assert.ok(rig.takeReloads().length > 0);
    assert.equal(rig.running.engine!.deploys.scheduler.pendingOrgs, [], "the pending one ran");

    const second = await rig.request("POST", "/api/v1/config/deploy", { headers });
    assert.is(second.status, 200);
    assert.is(second.body.result, "unchanged");
    assert.equal(second.body.files_written, []);
    assert.equal(second.body.reloads, []);
    assert.is(second.body.revision, first.body.revision);
    assert.equal(rig.takeReloads(), [], "nothing reloaded");

    const gateway = rig.running.engine!.gateway;
    const units = await storeUnitStatuses(rig.db, gateway);
    assert.equal(
      units.map((u) => [u.unit, u.pending]),
      [
        ["gateway", false],
        [`org:${org.prefix}`, false],
        ["top", false],
      ],
    );
    await insertUser(rig.db, org.id, sipUser(org.prefix, "101"));
    const behind = (await storeUnitStatuses(rig.db, gateway)).find(
      (u) => u.unit === `org:${org.prefix}`,
    );
    assert.is(behind?.pending, true, "pbxctl status shows saved-but-not-live");
    await rig.request("POST", "/api/v1/config/deploy", { headers });
    rig.takeReloads();

    const status = await rig.request("GET", "/api/v1/config/status", { headers });
    assert.is(status.status, 200);
    assert.is(status.body.live, true);
    assert.is(status.body.applied_revision, status.body.desired_revision);
    assert.equal(
      status.body.deploys.slice(0, 3).map((d: { result: string }) => d.result),
      ["ok", "unchanged", "ok"],
    );
  }));

test("saved but not live shows: desired differs from applied until the deploy runs", () =>
  withRig({ ami: true }, async (rig) => {
    const org = await rig.createOrg();
    await rig.advance(1000);
    const headers = { "x-api-key": org.api_key };
    const live = await rig.request("GET", "/api/v1/config/status", { headers });
    assert.is(live.body.live, true);
    // File mode answers as it always did: `realtime_pending` is realtime mode's alone.
    assert.equal(Object.keys(live.body).sort(), [
      "applied_at",
      "applied_revision",
      "compile_error",
      "deploy_scheduled",
      "deploys",
      "desired_revision",
      "live",
      "org_id",
      "served",
      "unit",
    ]);

    await insertUser(rig.db, org.id, sipUser(org.prefix, "100"));
    rig.running.engine!.deploys.scheduleDeploy(org.id);
    const pending = await rig.request("GET", "/api/v1/config/status", { headers });
    assert.is(pending.body.live, false);
    assert.is(pending.body.deploy_scheduled, true);
    assert.is.not(pending.body.desired_revision, pending.body.applied_revision);

    await rig.advance(800);
    const after = await rig.request("GET", "/api/v1/config/status", { headers });
    assert.is(after.body.live, true);
    assert.is(after.body.applied_revision, pending.body.desired_revision);
  }));

test("a failed background deploy is logged and recorded; the request that caused it had succeeded", () =>
  withRig({ ami: true }, async (rig) => {
    const org = await rig.createOrg();
    await rig.advance(1000);
    const headers = { "x-api-key": org.api_key };
    rig.ami!.refuseNextReloads = 100; // "A module reload request is already in progress", always

    // A new phone: its PJSIP reload is the `module reload` the engine refuses.
    const res = await rig.request("POST", "/api/v1/users", {
      headers,
      body: { extension: "142", name: "New Phone" },
    });
    assert.is(res.status, 201, res.text);
    await rig.advance(800);

    const status = await rig.request("GET", "/api/v1/config/status", { headers });
    const last = status.body.deploys[0];
    assert.is(last.trigger, "schedule");
    assert.is(last.result, "failed");
    assert.match(last.error, /already in progress/);
    assert.is(status.body.live, false, "saved but not live");
    const logged = rig.logs.map((line) => JSON.parse(line)).filter((l) => l.level >= 50);
    assert.ok(
      logged.some((l) => l.msg === "background deploy failed" && l.org_id === org.id),
      "the failure is logged with the org",
    );

    // Once the engine accepts reloads again, a deploy makes it live.
    rig.ami!.refuseNextReloads = 0;
    const retry = await rig.request("POST", "/api/v1/config/deploy", { headers });
    assert.is(retry.status, 200, retry.text);
    assert.ok(
      retry.body.reloads.some(
        (r: { command: string }) => r.command === "module reload res_pjsip.so",
      ),
    );
    const again = await rig.request("GET", "/api/v1/config/status", { headers });
    assert.is(again.body.live, true);
  }));

test("a suspended org's files are removed and the include files stop naming it", () =>
  withRig({ ami: true }, async (rig) => {
    const org = await rig.createOrg();
    await insertUser(rig.db, org.id, sipUser(org.prefix, "100"));
    await rig.advance(1000);
    assert.ok(rig.read(`orgs/${org.prefix}/pjsip.conf`) !== null);

    const res = await rig.request("PUT", `/api/v1/admin/organizations/${org.id}`, {
      headers: await rig.adminHeaders(),
      body: { status: "suspended" },
    });
    assert.is(res.status, 200, res.text);
    await rig.advance(800);
    assert.is(rig.read(`orgs/${org.prefix}/pjsip.conf`), null);
    assert.is(rig.read(`orgs/${org.prefix}/extensions.conf`), null);
    assert.not.match(rig.read("pjsip.conf")!, new RegExp(org.prefix));
  }));

test("edits to two orgs deploy both, and their reloads never overlap", () =>
  withRig({ ami: true }, async (rig) => {
    const a = await rig.createOrg("A");
    const b = await rig.createOrg("B");
    await rig.advance(1000);
    rig.takeReloads();
    rig.ami!.reloadDelayMs = 50;
    await insertUser(rig.db, a.id, sipUser(a.prefix, "100"));
    await insertUser(rig.db, b.id, sipUser(b.prefix, "100"));
    rig.running.engine!.deploys.scheduleDeploy(a.id);
    rig.running.engine!.deploys.scheduleDeploy(b.id);
    await rig.advance(800);
    for (const org of [a, b]) {
      assert.match(rig.read(`orgs/${org.prefix}/pjsip.conf`)!, new RegExp(`${org.prefix}100`));
    }
    assert.ok(rig.takeReloads().length >= 2);
    assert.is(rig.ami!.overlaps, 0);
  }));

test("closing the server (SIGTERM) runs the pending deploys first", () =>
  withRig({ ami: true }, async (rig) => {
    const org = await rig.createOrg(); // scheduled, clock never advanced
    assert.is(rig.read(`orgs/${org.prefix}/extensions.conf`), null);
    await rig.running.close();
    assert.ok(rig.read(`orgs/${org.prefix}/extensions.conf`) !== null, "flushed on close");
    assert.match(rig.read("extensions.conf")!, new RegExp(org.prefix));
  }));

test("a DID change regenerates the gateway after the org's deploy", () =>
  withRig({ ami: true }, async (rig) => {
    const org = await rig.createOrg();
    await rig.advance(1000);
    assert.not.match(rig.read("gateway/extensions.conf")!, /918065978001/);
    await insertDid(rig.db, org.id, "+918065978001");
    rig.running.engine!.deploys.scheduleDeploy(org.id);
    await rig.advance(800);
    assert.match(rig.read("gateway/extensions.conf")!, /918065978001/);
  }));

test("POST /admin/regenerate-gateway: two calls 300 ms apart both answer 200 and reload one after the other", () =>
  withRig({ ami: true }, async (rig) => {
    const a = await rig.createOrg("A");
    const b = await rig.createOrg("B");
    await rig.advance(1000);
    rig.takeReloads();
    rig.ami!.reloadDelayMs = 500; // a slow reload: the second call arrives while it runs
    await insertDid(rig.db, a.id, "+918065978001");
    const admin = await rig.adminHeaders();
    const first = rig.request("POST", "/api/v1/admin/regenerate-gateway", { headers: admin });
    await new Promise((resolve) => setTimeout(resolve, 300));
    await insertDid(rig.db, b.id, "+918065978002");
    const second = rig.request("POST", "/api/v1/admin/regenerate-gateway", {
      headers: { "x-internal-key": "internal-test-key" },
    });
    const [one, two] = await Promise.all([first, second]);
    assert.is(one.status, 200, one.text);
    assert.equal(one.body, { success: true, didCount: 1, orgCount: 1 });
    assert.is(two.status, 200, two.text);
    assert.equal(two.body, { success: true, didCount: 2, orgCount: 2 });
    assert.equal(rig.takeReloads(), ["dialplan reload", "dialplan reload"]);
    assert.is(rig.ami!.overlaps, 0);
    const [r1, r2] = rig.ami!.reloads.slice(-2);
    assert.ok(r2!.start >= r1!.end, "the second reload started after the first answered");
  }));

test("a music-on-hold upload gives the org its class, used by its queue; deleting the last file removes it", () =>
  withRig({ ami: true }, async (rig) => {
    const org = await rig.createOrg();
    const headers = { "x-api-key": org.api_key };
    const queue = await rig.request("POST", "/api/v1/queues", {
      headers,
      body: { number: "600", name: "Support" },
    });
    assert.is(queue.status, 201, queue.text);
    await rig.advance(1000);
    const moh = `orgs/${org.prefix}/musiconhold.conf`;
    assert.not.match(rig.read(moh)!, /^\[/m, "no files, no class");
    assert.match(rig.read(`orgs/${org.prefix}/queues.conf`)!, "musicclass=default");
    assert.match(rig.read("musiconhold.conf")!, `#include "${moh}"`);
    rig.takeReloads();

    const upload = await fetch(`${rig.url}/api/v1/music-on-hold?name=hold`, {
      method: "POST",
      headers: { ...headers, "content-type": "audio/wav" },
      body: encodeWav(new Int16Array(8000), 8000),
    });
    assert.is(upload.status, 201, await upload.text());
    await rig.advance(800);
    const own = `${org.prefix}moh`;
    assert.match(
      rig.read(moh)!,
      `[${own}]\n; plays hold.wav\nmode=files\ndirectory=sounds/moh/${org.id}\n`,
    );
    assert.match(rig.read(`orgs/${org.prefix}/queues.conf`)!, `musicclass=${own}`);
    const reloads = rig.takeReloads();
    assert.is(reloads[0], "module reload res_musiconhold.so", reloads.join(", "));
    assert.is(reloads.filter((c) => c === "module reload res_musiconhold.so").length, 1);

    const deleted = await rig.request("DELETE", "/api/v1/music-on-hold/hold", { headers });
    assert.is(deleted.status, 204, deleted.text);
    await rig.advance(800);
    assert.not.match(rig.read(moh)!, own);
    assert.match(rig.read(`orgs/${org.prefix}/queues.conf`)!, "musicclass=default");
    assert.ok(rig.takeReloads().includes("module reload res_musiconhold.so"));
  }));

test("cross-org regenerate is refused; own regenerate deploys now", () =>
  withRig({ ami: true }, async (rig) => {
    const a = await rig.createOrg("A");
    const b = await rig.createOrg("B");
    const denied = await rig.request("POST", `/api/v1/organizations/${b.id}/regenerate`, {
      headers: { "x-api-key": a.api_key },
    });
    assert.is(denied.status, 403);
    const own = await rig.request("POST", `/api/v1/organizations/${a.id}/regenerate`, {
      headers: { "x-api-key": a.api_key },
    });
    assert.is(own.status, 200, own.text);
    assert.is(own.body.success, true);
    assert.ok(own.body.files_written.length > 0);
    assert.ok(rig.read(`orgs/${a.prefix}/extensions.conf`) !== null);
  }));

test.run();
