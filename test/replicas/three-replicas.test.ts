// Three `pbxctl serve` replicas on one store and one (fake) engine, as an operator runs them
// behind a load balancer: writes spread over the replicas all go live, reloads never overlap
// (the fake engine counts overlaps; on-request deploys asked of any replica included), a burst of edits to one org costs at most 2 reloads, a
// SIGKILL of the replica holding the deployer and ingest leases mid-burst leaves the others to
// finish the deploy within 10 s and to store the engine's call records once, and 1,000 webhook
// events created across the replicas all reach a receiver, none lost across a SIGKILL and no
// webhook-id shared by two events.
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { FakeAmiServer } from "../../src/engine/testing/fake-ami.js";
import { freshStoreLocation } from "../store/test-database.js";
import { pool, type Replica, startReplica, until } from "./replicas.js";

const PASSWORD = "replica-test-password";
const ORGS = 10;
const USERS_PER_ORG = 30;
const WEBHOOK_EVENTS = 1000;

interface Org {
  id: string;
  prefix: string;
  headers: Record<string, string>;
}

async function call(
  replica: Replica,
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: unknown,
  // biome-ignore lint/suspicious/noExplicitAny: JSON answers are inspected field by field
): Promise<{ status: number; body: any }> {
  const res = await fetch(`${replica.url}${path}`, {
    method,
    headers: { ...headers, ...(body !== undefined ? { "content-type": "application/json" } : {}) },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
}

/** A receiver that records each delivery's webhook-id and the call id in its body. */
async function startReceiver(): Promise<{
  url: string;
  received: { webhookId: string; callId: string }[];
  server: Server;
}> {
  const received: { webhookId: string; callId: string }[] = [];
  const server = createServer((req, res) => {
    let body = "";
    req.on("data", (chunk: Buffer) => {
      body += chunk.toString();
    });
    req.on("end", () => {
      const parsed = JSON.parse(body) as { data: { call_id: string } };
      received.push({ webhookId: String(req.headers["webhook-id"]), callId: parsed.data.call_id });
      // A little latency keeps attempts in flight when a replica is killed.
      setTimeout(() => res.writeHead(200).end("ok"), 5);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}/hook`, received, server };
}

/** One call's `Cdr` as the engine sends it (the recorded internal call, renamed to `org`). */
function cdrEvent(org: Org, n: number): Record<string, string> {
  const fixture = JSON.parse(
    readFileSync(new URL("../../fixtures/calls/internal.json", import.meta.url), "utf8"),
  ) as { events: Record<string, string>[] };
  const recorded = fixture.events.find((e) => e.event === "Cdr" && e.accountcode !== "")!;
  const text = JSON.stringify(recorded).split("aaaaaaaa-0000-4000-8000-000000000001").join(org.id);
  const event = JSON.parse(text) as Record<string, string>;
  const id = `1800000000.${n}`;
  return { ...event, uniqueid: id, linkedid: id, sequence: String(n) };
}

test("three replicas on one store: deploys, failover, call records and webhooks", async () => {
  const dataDir = mkdtempSync(join(tmpdir(), "pbx-replicas-"));
  const ami = new FakeAmiServer({ reloadDelayMs: 20, engineDir: join(dataDir, "asterisk") });
  const amiPort = await ami.listen();
  const receiver = await startReceiver();
  // The store: the data dir's SQLite file, or (npm run test:pg) a fresh PostgreSQL database.
  const store = await freshStoreLocation(join(dataDir, "pbx.db"));
  const env = {
    ...(store.location.kind === "postgres" ? { PBX_DATABASE_URL: store.location.url } : {}),
    PBX_ENGINE: "ami",
    PBX_AMI_HOST: "127.0.0.1",
    PBX_AMI_PORT: String(amiPort),
    PBX_AMI_USERNAME: "pbxctl",
    PBX_AMI_SECRET: "secret",
    PBX_ADMIN_PASSWORD: PASSWORD,
    PBX_WEBHOOK_ALLOW_PRIVATE: "1",
    LOG_LEVEL: "info",
  };
  const replicas: Replica[] = [];
  try {
    // The first one takes every role; the others serve the API and deliver webhooks.
    replicas.push(await startReplica("r1", dataDir, env));
    replicas.push(...(await Promise.all(["r2", "r3"].map((n) => startReplica(n, dataDir, env)))));
    const [r1, r2, r3] = replicas as [Replica, Replica, Replica];
    const h1 = await r1.health();
    // By kind only: /health needs no authentication (the leases' names are for admins).
    assert.equal(h1.roles, ["deployer", "call-ingest", "ticket-poller", "retention"]);
    assert.equal((await r2.health()).roles, []);
    assert.equal((await r3.health()).roles, []);

    // One admin token, issued by r1, accepted by the others: the JWT secret is shared.
    const auth = await call(
      r1,
      "POST",
      "/api/v1/admin/auth",
      {},
      {
        admin_username: "admin",
        admin_password: PASSWORD,
      },
    );
    assert.is(auth.status, 200);
    const admin = { authorization: `Bearer ${auth.body.token}` };
    const orgs: Org[] = [];
    for (let i = 0; i < ORGS; i++) {
      const res = await call(replicas[i % 3]!, "POST", "/api/v1/organizations", admin, {
        name: `Org ${i}`,
      });
      assert.is(res.status, 201, JSON.stringify(res.body));
      orgs.push({
        id: res.body.id,
        prefix: res.body.context_prefix,
        headers: { "x-api-key": res.body.api_key },
      });
    }

    // 300 API writes spread over the replicas.
    let n = 0;
    const writes = orgs.flatMap((org) =>
      Array.from({ length: USERS_PER_ORG }, (_, u) => {
        const replica = replicas[n++ % 3]!;
        return async () => {
          const res = await call(replica, "POST", "/api/v1/users", org.headers, {
            extension: String(1000 + u),
            name: `User ${u}`,
          });
          assert.is(res.status, 201, JSON.stringify(res.body));
        };
      }),
    );
    // On-request deploys, reloads and gateway regenerations asked of the replicas that are not
    // the deployer, in the middle of the writes: carried out by the deployer, so they too never
    // overlap its reloads (the fake engine counts overlaps).
    const onRequest = orgs.slice(0, 6).flatMap((org, i) => [
      async () => {
        const res = await call(
          replicas[1 + (i % 2)]!,
          "POST",
          "/api/v1/config/deploy",
          org.headers,
        );
        assert.is(res.status, 200, JSON.stringify(res.body));
      },
      async () => {
        const res = await call(
          replicas[2 - (i % 2)]!,
          "POST",
          "/api/v1/config/reload",
          org.headers,
        );
        assert.is(res.status, 200, JSON.stringify(res.body));
      },
    ]);
    const gateway = async () => {
      const res = await call(r3, "POST", "/api/v1/admin/regenerate-gateway", admin);
      assert.is(res.status, 200, JSON.stringify(res.body));
    };
    const mixed = [...writes];
    for (const [i, job] of [...onRequest, gateway].entries()) mixed.splice(i * 20 + 10, 0, job);
    await pool(6, mixed);
    const allLive = async (replica: Replica, list: readonly Org[]) => {
      for (const org of list) {
        const status = await call(replica, "GET", "/api/v1/config/status", org.headers);
        if (!status.body.live || status.body.deploy_scheduled) return undefined;
      }
      return true;
    };
    await until("every org live", 30_000, () => allLive(r2, orgs));
    for (const org of orgs) {
      for (let u = 0; u < USERS_PER_ORG; u++) {
        const endpoint = `${org.prefix}${1000 + u}`;
        assert.ok(ami.config!.has("pjsip show endpoint", endpoint), `${endpoint} not loaded`);
      }
    }
    assert.is(ami.overlaps, 0, "reloads overlapped");

    // A burst of edits to one org, through every replica: at most 2 reloads.
    const burstOrg = orgs[0]!;
    const users = await call(r3, "GET", "/api/v1/users?limit=100", burstOrg.headers);
    const ids: string[] = (users.body.data ?? users.body).map((u: { id: string }) => u.id);
    const before = ami.reloadCommands().length;
    await pool(
      3,
      ids.slice(0, 9).map((id, i) => async () => {
        const res = await call(replicas[i % 3]!, "PUT", `/api/v1/users/${id}`, burstOrg.headers, {
          name: `Burst ${i}`,
        });
        assert.is(res.status, 200, JSON.stringify(res.body));
      }),
    );
    await until("the burst live", 15_000, () => allLive(r3, [burstOrg]));
    const burstReloads = ami.reloadCommands().slice(before);
    const rounds = Math.max(
      ...[...new Set(burstReloads)].map((c) => burstReloads.filter((x) => x === c).length),
    );
    assert.ok(rounds >= 1 && rounds <= 2, `burst gave ${rounds} reloads: ${burstReloads}`);

    // Caches: a key revoked through one replica is refused by every other within 1 s.
    const key = await call(r2, "POST", "/api/v1/api-keys", burstOrg.headers, { name: "Revoked" });
    assert.is(key.status, 201, JSON.stringify(key.body));
    const keyHeaders = { "x-api-key": key.body.api_key };
    for (const replica of replicas) {
      // Each replica has read (and may keep) the key before it is revoked.
      assert.is((await call(replica, "GET", "/api/v1/users?limit=1", keyHeaders)).status, 200);
    }
    const revoked = await call(
      r1,
      "POST",
      `/api/v1/api-keys/${key.body.id}/revoke`,
      burstOrg.headers,
    );
    assert.is(revoked.status, 200, JSON.stringify(revoked.body));
    const revokedAt = Date.now();
    for (const replica of [r2, r3]) {
      await until(`${replica.name} refuses the revoked key`, 1000, async () => {
        const res = await call(replica, "GET", "/api/v1/users?limit=1", keyHeaders);
        return res.status === 401 ? true : undefined;
      });
    }
    console.log(`  revoked key refused by every replica within ${Date.now() - revokedAt} ms`);

    // Media: a greeting generated through one replica downloads through another.
    const ivr = await call(r2, "POST", "/api/v1/ivrs", burstOrg.headers, {
      name: "Main",
      extension: "900",
    });
    assert.is(ivr.status, 201, JSON.stringify(ivr.body));
    const greeting = await call(
      r2,
      "POST",
      `/api/v1/ivrs/${ivr.body.id}/generate-greeting`,
      burstOrg.headers,
      { text: "Welcome" },
    );
    assert.is(greeting.status, 200, JSON.stringify(greeting.body));
    const audio = await fetch(`${r3.url}/api/v1/ivrs/${ivr.body.id}/greeting-audio`, {
      headers: burstOrg.headers,
    });
    assert.is(audio.status, 200);
    const wav = Buffer.from(await audio.arrayBuffer());
    assert.is(wav.subarray(0, 4).toString("latin1"), "RIFF");
    for (const replica of replicas) {
      const health = await replica.health();
      assert.equal(health.media, { sounds: "ok", recordings: "ok" }, replica.name);
      assert.is(health.database, store.location.kind);
    }

    // SIGKILL of the deployer (which also holds the ingest) in the middle of a burst.
    const killOrg = orgs[1]!;
    const killIds: string[] = (
      await call(r2, "GET", "/api/v1/users?limit=100", killOrg.headers)
    ).body.data.map((u: { id: string }) => u.id);
    const edit = (replica: Replica, id: string, name: string) =>
      call(replica, "PUT", `/api/v1/users/${id}`, killOrg.headers, { name });
    assert.is((await edit(r2, killIds[0]!, "Before kill")).status, 200);
    assert.is((await edit(r3, killIds[1]!, "Before kill")).status, 200);
    const callsBefore = 20;
    for (let c = 0; c < callsBefore; c++) ami.emitEvent(cdrEvent(killOrg, c));
    await r1.kill("SIGKILL");
    const killedAt = Date.now();
    assert.is((await edit(r2, killIds[2]!, "After kill")).status, 200);
    assert.is((await edit(r3, killIds[3]!, "After kill")).status, 200);
    // Calls end while nobody holds the ingest: the standbys keep them for the next owner.
    for (let c = callsBefore; c < 2 * callsBefore; c++) ami.emitEvent(cdrEvent(killOrg, c));
    await until("the burst deployed by a survivor", 10_000, () => allLive(r2, [killOrg]));
    const takeover = Date.now() - killedAt;
    assert.ok(takeover <= 10_000, `desired = applied ${takeover} ms after the kill`);
    const roles = [...(await r2.health()).roles, ...(await r3.health()).roles];
    assert.ok(roles.includes("deployer"), `deployer taken: ${roles}`);
    assert.ok(roles.includes("call-ingest"), `ingest taken: ${roles}`);
    assert.is(ami.overlaps, 0, "reloads overlapped across the failover");
    // Every call record stored exactly once, those of the gap included.
    const history = await until("every call record stored", 10_000, async () => {
      const res = await call(r3, "GET", "/api/v1/calls/history?limit=100", killOrg.headers);
      return res.body.total >= 2 * callsBefore ? res.body : undefined;
    });
    assert.is(history.total, 2 * callsBefore);
    assert.is(new Set(history.calls.map((c: { uniqueid: string }) => c.uniqueid)).size, 40);
    console.log(`  deploy takeover after SIGKILL: desired = applied in ${takeover} ms`);

    // 1,000 webhook events created across the two survivors; r3 is killed halfway.
    const hookOrg = orgs[2]!;
    const hook = await call(r2, "POST", "/api/v1/webhooks", hookOrg.headers, {
      url: receiver.url,
      events: ["call.initiated"],
      timeout: 1000,
    });
    assert.is(hook.status, 201, JSON.stringify(hook.body));
    const accepted = new Set<string>();
    let alive = [r2, r3];
    await pool(
      8,
      Array.from({ length: WEBHOOK_EVENTS }, (_, i) => async () => {
        if (i === WEBHOOK_EVENTS / 2) {
          alive = [r2];
          await r3.kill("SIGKILL");
        }
        const callId = `event-${i}`;
        for (const replica of [alive[i % alive.length]!, r2]) {
          try {
            const res = await call(replica, "POST", "/api/v1/test/call-event", hookOrg.headers, {
              event: "call.initiated",
              call_id: callId,
            });
            if (res.status === 202) accepted.add(callId);
            return;
          } catch {
            // Killed under the request: it may or may not have been stored; not counted.
          }
        }
      }),
    );
    assert.ok(accepted.size >= WEBHOOK_EVENTS - 10, `${accepted.size} accepted`);
    await until("every accepted event delivered", 30_000, async () => {
      const got = new Set(receiver.received.map((r) => r.callId));
      return [...accepted].every((id) => got.has(id)) ? true : undefined;
    });
    const eventsById = new Map<string, Set<string>>();
    const deliveries = new Map<string, number>();
    for (const { webhookId, callId } of receiver.received) {
      eventsById.set(webhookId, (eventsById.get(webhookId) ?? new Set()).add(callId));
      deliveries.set(callId, (deliveries.get(callId) ?? 0) + 1);
    }
    const shared = [...eventsById.values()].filter((events) => events.size > 1);
    assert.is(shared.length, 0, "two different events under one webhook-id");
    const once = [...accepted].filter((id) => deliveries.get(id) === 1).length;
    console.log(
      `  webhooks: ${accepted.size} events accepted, all delivered; exactly once: ` +
        `${once} (${((100 * once) / accepted.size).toFixed(1)}%)`,
    );
  } catch (error) {
    // What the replicas logged as errors says why.
    for (const replica of replicas) {
      for (const line of replica.logs.filter((l) => /"level":(40|50|60)/.test(l)).slice(-10)) {
        console.error(`${replica.name}: ${line}`);
      }
    }
    throw error;
  } finally {
    await Promise.all(replicas.map((r) => r.kill("SIGTERM").catch(() => {})));
    await ami.close();
    receiver.server.close();
    await store.drop();
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test.run();
