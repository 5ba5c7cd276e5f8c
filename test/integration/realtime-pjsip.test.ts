// Realtime PJSIP in the server (PBX_PJSIP=realtime, issue 24): a save writes the org's `ps_*`
// rows and expires exactly the changed objects in the engine's memory cache at once, without the
// files' debounce and without ever reloading res_pjsip; what the engine was not told stays in the
// store until it is. The PostgreSQL parts run on `npm run test:pg` (the rows live where Asterisk
// reads them); the configuration checks run on every backend.
import { sql } from "kysely";
import { test } from "uvu";
import * as assert from "uvu/assert";
import Status from "../../src/cli/commands/status.js";
import { loadConfig, pjsipModeFrom } from "../../src/config.js";
import { RealtimePjsip } from "../../src/deploy/realtime-pjsip.js";
import { ReloadQueue } from "../../src/deploy/reload-queue.js";
import { StoreBuilds } from "../../src/deploy/store-builds.js";
import type { EngineTarget } from "../../src/engine/target.js";
import { FakeAmiServer } from "../../src/engine/testing/fake-ami.js";
import { createLeaseRepository } from "../../src/store/lease-repository.js";
import { createPjsipRealtimeRepository } from "../../src/store/pjsip-realtime-repository.js";
import { runCommand, withEnv } from "../cli/run-command.js";
import { testBackend } from "../store/test-database.js";
import { eventually } from "../tickets/helpers.js";
import { insertUser, type Rig, sipUser, withRig } from "./helpers.js";

test("PBX_PJSIP is file by default; realtime needs PBX_DATABASE_URL; anything else is refused", () => {
  assert.is(pjsipModeFrom({}), "file");
  assert.is(pjsipModeFrom({ PBX_PJSIP: "file" }), "file");
  assert.is(
    pjsipModeFrom({ PBX_PJSIP: "realtime", PBX_DATABASE_URL: "postgres://u:p@10.0.0.1/pbx" }),
    "realtime",
  );
  assert.throws(
    () => pjsipModeFrom({ PBX_PJSIP: "realtime" }),
    (error: Error) =>
      error.message.startsWith("PBX_PJSIP=realtime needs PBX_DATABASE_URL: Asterisk reads"),
  );
  assert.throws(
    () => pjsipModeFrom({ PBX_PJSIP: "files" }),
    (error: Error) => error.message === 'invalid PBX_PJSIP: "files" (need file or realtime)',
  );
  // The server refuses to start with it, before opening anything.
  assert.throws(
    () => loadConfig({ PBX_PJSIP: "realtime", PBX_ADMIN_PASSWORD: "x" }, { dataDir: "/tmp" }),
    /PBX_PJSIP=realtime needs PBX_DATABASE_URL/,
  );
});

/** The AMI actions the fake engine received since `from`, as `Action Cache Object` strings. */
function expiries(ami: FakeAmiServer, from = 0): string[] {
  return ami.received
    .slice(from)
    .filter((a) => a.action === "SorceryMemoryCacheExpireObject")
    .map((a) => `${a.fields.Cache} ${a.fields.Object}`);
}

async function createUser(rig: Rig, apiKey: string, body: Record<string, unknown>) {
  const res = await rig.request("POST", "/api/v1/users", {
    headers: { "x-api-key": apiKey },
    body,
  });
  assert.is(res.status, 201, res.text);
  return res.body as { id: string; sip_password: string };
}

/** `GET /config/status` of the key's org: live, whether its files alone are, what PJSIP owes. */
async function configLiveness(rig: Rig, apiKey: string) {
  const res = await rig.request("GET", "/api/v1/config/status", {
    headers: { "x-api-key": apiKey },
  });
  assert.is(res.status, 200, res.text);
  return {
    live: res.body.live,
    files_live: res.body.desired_revision === res.body.applied_revision,
    realtime_pending: res.body.realtime_pending,
  };
}

const HOUR = 3_600_000;
const HOUR_LEASE = { ttlMs: HOUR, renewEveryMs: HOUR };

if (testBackend() === "postgres") {
  test("a user saved through the API is rows and expired in the engine before the files' debounce; res_pjsip is never reloaded", () =>
    withRig({ ami: true, realtime: true }, async (rig) => {
      const ami = rig.ami!;
      const realtime = rig.running.engine!.realtime!;
      const rows = createPjsipRealtimeRepository(rig.db);
      const org = await rig.createOrg();
      await rig.advance(6000);
      await realtime.idle();
      const mark = ami.received.length;
      const user = await createUser(rig, org.api_key, { extension: "2001", name: "Alice" });
      const id = `${org.prefix}2001`;
      // No clock moved: the debounced file deploy has not run, the rows are there already.
      await realtime.idle();
      assert.is(rig.running.engine!.deploys.scheduler.pendingOrgs.includes(org.id), true);
      const endpoint = await rows.row("ps_endpoints", id);
      assert.is(endpoint?.context, `${org.prefix}internal`);
      assert.is(endpoint?.auth, id);
      const auth = await rows.row("ps_auths", id);
      assert.is(auth?.username, id);
      assert.ok(auth?.password_digest, "the digest from the store, never the password");
      assert.ok(await rows.row("ps_aors", id));
      assert.equal(expiries(ami, mark).sort(), [
        `res_pjsip/aor ${id}`,
        `res_pjsip/auth ${id}`,
        `res_pjsip/endpoint ${id}`,
      ]);
      // Verified: the engine serves the new endpoint.
      assert.ok(ami.commands().includes(`pjsip show endpoint ${id}`));
      assert.equal(await realtime.pending(), []);

      // The debounced file deploy: the dialplan reloads, the org's pjsip.conf has no endpoint.
      await rig.advance(6000);
      assert.not.match(rig.read(`orgs/${org.prefix}/pjsip.conf`) ?? "", `[${id}]`);
      assert.ok(rig.takeReloads().includes("dialplan reload"));

      // A new password: the auth row changes and only what changed is expired.
      const before = ami.received.length;
      const put = await rig.request("PUT", `/api/v1/users/${user.id}`, {
        headers: { "x-api-key": org.api_key },
        body: { sip_password: "Another-Secret-42" },
      });
      assert.is(put.status, 200, put.text);
      await realtime.idle();
      assert.is.not((await rows.row("ps_auths", id))?.password_digest, auth?.password_digest);
      assert.equal(expiries(ami, before), [`res_pjsip/auth ${id}`]);

      // Deleted: rows gone, the cached endpoint expired, the engine verified not to serve it.
      const gone = ami.received.length;
      const del = await rig.request("DELETE", `/api/v1/users/${user.id}`, {
        headers: { "x-api-key": org.api_key },
      });
      assert.is(del.status, 204, del.text);
      await realtime.idle();
      assert.is(await rows.row("ps_endpoints", id), null);
      assert.is(await rows.row("ps_auths", id), null);
      assert.ok(expiries(ami, gone).includes(`res_pjsip/endpoint ${id}`));
      assert.not.ok(ami.sorceryCached.has(`res_pjsip/endpoint/${id}`));
      assert.equal(await realtime.pending(), []);

      await rig.advance(6000);
      assert.not.ok(
        ami.reloadCommands().includes("module reload res_pjsip.so"),
        ami.reloadCommands().join(", "),
      );
    }));

  test("a save's rows are written while the previous save's engine notification still runs", () =>
    withRig({ ami: true, realtime: true }, async (rig) => {
      const org = await rig.createOrg();
      await rig.advance(6000);
      await rig.running.engine!.realtime!.idle();
      // A second writer over the same store whose engine holds every expiry until released.
      let release = () => {};
      const held = new Promise<void>((resolve) => {
        release = resolve;
      });
      const expired: string[] = [];
      const target: EngineTarget = {
        kind: "ami",
        reload: () => Promise.reject(new Error("no reload expected")),
        health: () => Promise.resolve({ status: "healthy", checkedAt: new Date().toISOString() }),
        close: () => Promise.resolve(),
        async expireCachedObject(_cache, id) {
          expired.push(id);
          await held;
          return "not cached";
        },
        verify: () => Promise.resolve([]),
      };
      const realtime = new RealtimePjsip({
        db: rig.db,
        builds: new StoreBuilds({
          db: rig.db,
          gateway: { environment: "prod", staging_endpoint: "staging-tunnel" },
          pjsip: "realtime",
        }),
        target,
        reloads: new ReloadQueue(target),
      });
      const rows = createPjsipRealtimeRepository(rig.db);
      try {
        await insertUser(rig.db, org.id, sipUser(org.prefix, "2101"));
        const first = realtime.sync(org.id);
        await eventually("the first expiry is sent", () => expired.length > 0);
        // The engine has not answered the first save's expiry: the next save's rows still land.
        await insertUser(rig.db, org.id, sipUser(org.prefix, "2102"));
        const second = realtime.sync(org.id);
        await eventually(
          "the second save's row",
          async () => (await rows.row("ps_endpoints", `${org.prefix}2102`)) !== null,
        );
        assert.equal(expired, [`${org.prefix}2101`], "still held at the first expiry");
        release();
        await Promise.all([first, second]);
        await realtime.idle();
        assert.ok(expired.includes(`${org.prefix}2102`), "the second save is told to the engine");
        assert.equal(await realtime.pending(org.id), []);
      } finally {
        release();
        await realtime.stop();
      }
    }));

  test("a trunk's rows: its registration change reloads only outbound registrations; its identify stays a file", () =>
    withRig({ ami: true, realtime: true }, async (rig) => {
      const realtime = rig.running.engine!.realtime!;
      const rows = createPjsipRealtimeRepository(rig.db);
      const org = await rig.createOrg();
      await rig.advance(6000);
      await realtime.idle();
      rig.takeReloads();
      const res = await rig.request("POST", "/api/v1/trunks", {
        headers: { "x-api-key": org.api_key },
        body: {
          name: "carrier2",
          host: "198.51.100.7",
          username: "acct",
          password: "trunk-secret",
          registration: true,
        },
      });
      assert.is(res.status, 201, res.text);
      await realtime.idle();
      const id = `${org.prefix}trunk_carrier2`;
      assert.ok(await rows.row("ps_endpoints", id));
      assert.ok(await rows.row("ps_registrations", id), "the registration is a row");
      assert.equal(rig.takeReloads(), ["module reload res_pjsip_outbound_registration.so"]);
      await rig.advance(6000);
      assert.match(rig.read(`orgs/${org.prefix}/pjsip.conf`)!, "198.51.100.7");
      const reloads = rig.takeReloads();
      assert.ok(
        reloads.includes("module reload res_pjsip_endpoint_identifier_ip.so"),
        `${reloads}`,
      );
      assert.not.ok(reloads.includes("module reload res_pjsip.so"));
    }));

  test("saved while AMI is down: the pending objects are kept in the store and listed, then the engine converges", () =>
    withRig({ ami: true, realtime: true }, async (rig) => {
      const realtime = rig.running.engine!.realtime!;
      const org = await rig.createOrg();
      const other = await rig.createOrg();
      await rig.advance(6000);
      await realtime.idle();
      const port = rig.ami!.port;
      await rig.ami!.close();
      await createUser(rig, org.api_key, { extension: "3001", name: "Carol" });
      const id = `${org.prefix}3001`;
      await realtime.idle();
      // GET /config/status: the org's PJSIP is owed to the engine; the other org is live.
      assert.equal((await configLiveness(rig, org.api_key)).realtime_pending, {
        unwritten: 0,
        not_taken: 3,
      });
      assert.equal(await configLiveness(rig, other.api_key), {
        live: true,
        files_live: true,
        realtime_pending: { unwritten: 0, not_taken: 0 },
      });
      const pending = await realtime.pending(org.id);
      assert.equal(pending.map((p) => `${p.kind} ${p.id}`).sort(), [
        `aor ${id}`,
        `auth ${id}`,
        `endpoint ${id}`,
      ]);
      // The row is written all the same; only the engine's cache is owed.
      assert.ok(await createPjsipRealtimeRepository(rig.db).row("ps_endpoints", id));
      // `pbxctl status` lists them, and they make it PENDING (exit 3).
      const status = await withEnv(rig.env, () => runCommand(Status, ["--data-dir", rig.dataDir]));
      assert.is(status.code, 3, status.stdout + status.stderr);
      assert.match(status.stdout, "PJSIP objects the engine has not taken yet (3):");
      for (const kind of ["endpoint", "auth", "aor"])
        assert.match(status.stdout, `  ${kind} ${id} (saved `);

      const back = new FakeAmiServer({});
      await back.listen(port);
      try {
        await eventually("the engine took the pending objects", async () => {
          rig.clock.advance(30_000);
          await realtime.idle();
          return (await realtime.pending()).length === 0;
        });
        assert.equal(expiries(back).sort(), [
          `res_pjsip/aor ${id}`,
          `res_pjsip/auth ${id}`,
          `res_pjsip/endpoint ${id}`,
        ]);
        // (Its files wait for the file deploy's own retry: only PJSIP is asserted here.)
        assert.equal((await configLiveness(rig, org.api_key)).realtime_pending, {
          unwritten: 0,
          not_taken: 0,
        });
      } finally {
        await back.close();
      }
    }));

  test("a user deleted while the rows cannot be written: the rows and the expiries are retried, so the engine never keeps serving it", () =>
    withRig({ ami: true, realtime: true }, async (rig) => {
      const ami = rig.ami!;
      const realtime = rig.running.engine!.realtime!;
      const rows = createPjsipRealtimeRepository(rig.db);
      const org = await rig.createOrg();
      const user = await createUser(rig, org.api_key, { extension: "6001", name: "Fay" });
      const id = `${org.prefix}6001`;
      await realtime.idle();
      assert.ok(ami.sorceryCached.has(`res_pjsip/endpoint/${id}`), "cached by the verification");
      // A database error on the realtime tables right after the save commits (the table is
      // away): the users row is gone, its realtime rows could not be removed.
      await sql`alter table ps_endpoints rename to ps_endpoints_away`.execute(rig.db);
      const mark = ami.received.length;
      try {
        const del = await rig.request("DELETE", `/api/v1/users/${user.id}`, {
          headers: { "x-api-key": org.api_key },
        });
        assert.is(del.status, 204, del.text);
        await realtime.idle();
        assert.equal(expiries(ami, mark), [], "nothing to tell the engine yet");
        assert.ok(
          rig.logs.some((line) => line.includes("realtime PJSIP rows not written; retrying")),
        );
      } finally {
        await sql`alter table ps_endpoints_away rename to ps_endpoints`.execute(rig.db);
      }
      // The user's three rows wait for the retry: GET /config/status says the org is not live.
      assert.equal((await configLiveness(rig, org.api_key)).realtime_pending, {
        unwritten: 3,
        not_taken: 0,
      });
      assert.is((await configLiveness(rig, org.api_key)).live, false);
      // Nothing else happens to the org: only the retry can converge.
      await eventually("the retry removed the rows and told the engine", async () => {
        rig.clock.advance(30_000);
        await realtime.idle();
        return (
          (await rows.row("ps_endpoints", id)) === null && (await realtime.pending()).length === 0
        );
      });
      assert.is(await rows.row("ps_auths", id), null);
      assert.equal((await configLiveness(rig, org.api_key)).realtime_pending, {
        unwritten: 0,
        not_taken: 0,
      });
      assert.ok(expiries(ami, mark).includes(`res_pjsip/endpoint ${id}`));
      assert.ok(expiries(ami, mark).includes(`res_pjsip/auth ${id}`));
      assert.not.ok(ami.sorceryCached.has(`res_pjsip/endpoint/${id}`));

      // The queue of what is owed unreadable too: the flush is retried as well.
      await sql`alter table pjsip_realtime_pending rename to pending_away`.execute(rig.db);
      let failed: string | undefined;
      try {
        failed = (await realtime.flush()).error;
      } finally {
        await sql`alter table pending_away rename to pjsip_realtime_pending`.execute(rig.db);
      }
      assert.match(failed ?? "", "pjsip_realtime_pending");
    }));

  test("a replica that lost the deployer lease sends no cache expiry; what it owes waits in the store for the holder", () =>
    // Renewals never come during the test: this replica is a holder paused past its expiry that
    // has not noticed yet, so only the fence stands between its saves and the engine.
    withRig({ ami: true, realtime: true, roleOptions: HOUR_LEASE }, async (rig) => {
      const ami = rig.ami!;
      const realtime = rig.running.engine!.realtime!;
      const org = await rig.createOrg();
      await rig.advance(6000);
      await realtime.idle();
      const leases = createLeaseRepository(rig.db);
      const lease = (await leases.list()).find((l) => l.name.startsWith("deployer:"))!;
      assert.ok(lease, "this replica holds the deployer lease");
      // Another replica takes it over once it expired: a new term, not this replica's.
      const takeover = new Date(Date.parse(lease.expires_at) + 1);
      assert.is(await leases.acquire(lease.name, "replica-b", takeover, HOUR), lease.epoch + 1);

      const mark = ami.received.length;
      await createUser(rig, org.api_key, { extension: "5001", name: "Eve" });
      const id = `${org.prefix}5001`;
      await realtime.idle();
      // The rows are the store's (any replica's save writes them); the engine was told nothing.
      assert.ok(await createPjsipRealtimeRepository(rig.db).row("ps_endpoints", id));
      assert.equal(expiries(ami, mark), [], "no expiry sent by a stale holder");
      assert.equal((await realtime.pending(org.id)).map((p) => `${p.kind} ${p.id}`).sort(), [
        `aor ${id}`,
        `auth ${id}`,
        `endpoint ${id}`,
      ]);
      const again = await realtime.flush();
      assert.match(again.error ?? "", `no longer holds the ${lease.name} lease`);
      assert.equal(expiries(ami, mark), []);

      // The other replica gives the lease up; this one takes it again in a new term and then
      // sends what is owed.
      await leases.release(lease.name, "replica-b");
      await rig.running.roles.tick();
      await rig.running.roles.idle();
      await eventually("the holder took the pending objects", async () => {
        rig.clock.advance(30_000);
        await realtime.idle();
        return (await realtime.pending()).length === 0;
      });
      assert.equal(expiries(ami, mark).sort(), [
        `res_pjsip/aor ${id}`,
        `res_pjsip/auth ${id}`,
        `res_pjsip/endpoint ${id}`,
      ]);
    }));

  test("the start-up deploy writes every org's rows and removes the rows of an org that is gone", () =>
    withRig({ ami: true, realtime: true }, async (rig) => {
      const realtime = rig.running.engine!.realtime!;
      const org = await rig.createOrg();
      await createUser(rig, org.api_key, { extension: "4001", name: "Dan" });
      await realtime.idle();
      const id = `${org.prefix}4001`;
      // Rows of an org deleted while no deployer ran, and this org's rows lost.
      await sql`insert into ps_endpoints (id, context)
        values ('org_ffffffff-0000-4000-8000-00000000000f_1', 'x')`.execute(rig.db);
      await sql`delete from ps_endpoints where id = ${id}`.execute(rig.db);
      await rig.db.deleteFrom("pjsip_realtime_pending").execute();
      await rig.restart();
      const after = rig.running.engine!.realtime!;
      await after.idle();
      const rows = createPjsipRealtimeRepository(rig.db);
      assert.ok(await rows.row("ps_endpoints", id));
      assert.is(await rows.row("ps_endpoints", "org_ffffffff-0000-4000-8000-00000000000f_1"), null);
      assert.equal(await after.pending(), []);
    }));
}

test.run();
