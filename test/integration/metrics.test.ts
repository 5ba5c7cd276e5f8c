// /metrics after a scripted session on the real server (fake clock, fake AMI engine, a real
// webhook receiver): every metric moved as the session says it should, promtool accepts the
// scrape, and no tenant's data (org id, number, URL) ever appears in it.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { WEBHOOK_EVENTS } from "../../src/webhooks/events.js";
import { callFixtures, ORG_A, rewriteOrgs } from "../calls/fixture-events.js";
import { promtoolProblems, Scrape } from "../metrics/scrape.js";
import { eventually, storeRecord } from "../tickets/helpers.js";
import { type Receiver, startReceiver } from "../webhooks/helpers.js";
import { insertDid, type Rig, withRig } from "./helpers.js";

const ENGINE = { engine: "default" };
const fixtures = callFixtures();

async function scrape(rig: Rig, headers: Record<string, string>): Promise<Scrape> {
  const res = await rig.request("GET", "/metrics", { headers });
  assert.is(res.status, 200, res.text);
  return new Scrape(res.text);
}

/** The org's webhook deliveries that are not finished yet. */
async function unfinishedDeliveries(rig: Rig): Promise<number> {
  const rows = await rig.db
    .selectFrom("webhook_deliveries")
    .select("id")
    .where("status", "in", ["pending", "in_flight"])
    .execute();
  return rows.length;
}

async function count(rig: Rig, table: "call_records" | "call_events" | "webhook_deliveries") {
  const row = await rig.db
    .selectFrom(table)
    .select((eb) => eb.fn.countAll<number>().as("n"))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

async function withReceiver(run: (receiver: Receiver) => Promise<void>): Promise<void> {
  const receiver = await startReceiver();
  try {
    await run(receiver);
  } finally {
    await receiver.close();
  }
}

test("a scripted session moves each metric as it should, and promtool accepts the scrape", () =>
  withReceiver((receiver) =>
    withRig({ ami: true, env: { PBX_WEBHOOK_ALLOW_PRIVATE: "1" } }, async (rig) => {
      const admin = await rig.adminHeaders();
      const before = await scrape(rig, admin);
      const moved = (after: Scrape, name: string, labels: Record<string, string> = {}) =>
        after.value(name, labels) - before.value(name, labels);
      rig.takeReloads();

      // Saves: a new org goes live when its debounce ends, 800 ms after the save.
      const org = await rig.createOrg();
      await rig.advance(800);
      // A burst: ten saves at once are one deploy, live 800 ms after the first.
      for (let i = 1; i <= 10; i++) {
        const res = await rig.request("PUT", `/api/v1/organizations/${org.id}`, {
          headers: { "x-api-key": org.api_key },
          body: { settings: { max_concurrent_calls: i } },
        });
        assert.is(res.status, 200, res.text);
      }
      await rig.advance(800);
      let now = await scrape(rig, admin);
      assert.is(moved(now, "pbx_deploy_save_to_applied_seconds_count", ENGINE), 2);
      assert.ok(
        Math.abs(moved(now, "pbx_deploy_save_to_applied_seconds_sum", ENGINE) - 1.6) < 1e-9,
      );
      assert.is(moved(now, "pbx_deploy_failures_total", ENGINE), 0);

      // A failed reload: the engine refuses every module reload ("already in progress", which
      // only `module reload` can answer); a new phone's deploy fails and waits for a retry.
      rig.ami!.refuseNextReloads = 100;
      const created = await rig.request("POST", "/api/v1/users", {
        headers: { "x-api-key": org.api_key },
        body: { extension: "142", name: "New Phone" },
      });
      assert.is(created.status, 201, created.text);
      await rig.advance(800);
      now = await scrape(rig, admin);
      assert.is(moved(now, "pbx_deploy_failures_total", ENGINE), 1);
      assert.is(now.value("pbx_deploy_orgs_pending", ENGINE), 1);
      assert.is(now.value("pbx_deploy_oldest_pending_seconds", ENGINE), 0.8);
      assert.is(
        moved(now, "pbx_deploy_reload_duration_seconds_count", {
          ...ENGINE,
          module: "pjsip",
          result: "failed",
        }),
        1,
      );
      // The engine takes it again: the retry (1 s later) makes the save live, 1.8 s after it.
      rig.ami!.refuseNextReloads = 0;
      await rig.advance(1000);
      now = await scrape(rig, admin);
      assert.is(moved(now, "pbx_deploy_retries_total", ENGINE), 1);
      assert.is(now.value("pbx_deploy_orgs_pending", ENGINE), 0);
      assert.is(now.value("pbx_deploy_oldest_pending_seconds", ENGINE), 0);
      assert.is(moved(now, "pbx_deploy_save_to_applied_seconds_count", ENGINE), 3);
      assert.ok(
        Math.abs(moved(now, "pbx_deploy_save_to_applied_seconds_sum", ENGINE) - 3.4) < 1e-9,
      );
      const reloads = rig.takeReloads();
      assert.is(
        moved(now, "pbx_deploy_reload_commands_total", ENGINE),
        reloads.length,
        "every reload command the engine received, refused ones included",
      );
      assert.ok(reloads.filter((r) => r === "dialplan reload").length >= 4, reloads.join(", "));
      assert.is(
        reloads.filter((r) => r === "module reload res_pjsip.so").length,
        5,
        "PJSIP: the org's first deploy, the new phone's refused 3 times, then its retry",
      );
      assert.is(
        moved(now, "pbx_deploy_reload_duration_seconds_count", { ...ENGINE, result: "ok" }) +
          moved(now, "pbx_deploy_reload_duration_seconds_count", { ...ENGINE, result: "failed" }),
        reloads.length - 2,
        "one per queued reload: the refused PJSIP reload was sent 3 times",
      );

      // The engine connection: up, then cut and back (a reconnect).
      assert.is(now.value("pbx_ami_connected", { connection: "deploy" }), 1);
      const logins = rig.ami!.logins;
      rig.ami!.dropConnections();
      await eventually("the deployer's AMI logs in again", async () => {
        if (rig.ami!.logins <= logins) return false;
        return (
          (await scrape(rig, admin)).value("pbx_ami_connected", { connection: "deploy" }) === 1
        );
      });
      now = await scrape(rig, admin);
      assert.is(moved(now, "pbx_ami_reconnects_total", { connection: "deploy" }), 1);

      // Webhooks: every call event to a local receiver; its first answer is a 500 (no retry).
      receiver.respond = (_request, index) => ({ status: index === 0 ? 500 : 200 });
      const hook = await rig.request("POST", "/api/v1/webhooks", {
        headers: { "x-api-key": org.api_key },
        body: {
          url: receiver.url,
          events: WEBHOOK_EVENTS.filter((e) => e.startsWith("call.") || e.startsWith("queue.")),
          retry_count: 0,
        },
      });
      assert.is(hook.status, 201, hook.text);

      // Call events: a recorded inbound call through an IVR and a queue, as this org's. Half
      // way, the call is live.
      const events = rewriteOrgs(fixtures.get("inbound-ivr-queue")!.events, [[ORG_A, org.id]]);
      const firstHangup = events.findIndex((e) => e.event === "Hangup");
      for (const event of events.slice(0, firstHangup)) rig.running.calls.feed(event);
      await rig.running.calls.idle();
      now = await scrape(rig, admin);
      assert.is(now.value("pbx_live_calls"), 1);
      for (const event of events.slice(firstHangup)) rig.running.calls.feed(event);
      await rig.running.calls.idle();
      const records = await count(rig, "call_records");
      const steps = await count(rig, "call_events");
      assert.ok(records === 2 && steps > 0, `${records} records, ${steps} steps`);
      const deliveries = await count(rig, "webhook_deliveries");
      assert.ok(deliveries >= 2, `${deliveries} deliveries`);
      await eventually(
        "every delivery attempted",
        async () => (await unfinishedDeliveries(rig)) === 0,
      );

      // The same events again (a reconnect replays them): duplicates, nothing stored.
      for (const event of events) rig.running.calls.feed(event);
      await rig.running.calls.idle();

      now = await scrape(rig, admin);
      assert.is(now.value("pbx_live_calls"), 0);
      const ingested = (kind: string, result: string) =>
        moved(now, "pbx_call_events_ingested_total", { kind, result });
      assert.is(ingested("record", "stored"), records);
      assert.is(ingested("event", "stored"), steps);
      assert.is(ingested("record", "duplicate"), records);
      assert.is(ingested("event", "duplicate"), steps);
      assert.is(moved(now, "pbx_call_records_stored_total"), records);
      assert.is(moved(now, "pbx_call_ingest_lag_seconds_count"), records + steps);
      assert.ok(moved(now, "pbx_call_ingest_lag_seconds_sum") > 0);

      const attempts = (result: string) =>
        moved(now, "pbx_outbox_attempts_total", { outbox: "webhooks", result });
      assert.is(attempts("5xx"), 1);
      assert.is(attempts("2xx"), deliveries - 1);
      assert.is(moved(now, "pbx_outbox_attempts_total", { outbox: "webhooks" }), deliveries);
      assert.is(
        moved(now, "pbx_outbox_delivery_latency_seconds_count", { outbox: "webhooks" }),
        deliveries - 1,
      );
      assert.is(now.value("pbx_outbox_depth", { outbox: "webhooks" }), 0);
      assert.is(now.value("pbx_outbox_oldest_pending_seconds", { outbox: "webhooks" }), 0);

      // Tickets: an inbound call nobody answered (its record as ingest stores it); the poller is
      // behind until it reads it and POSTs it to the intake, which opens the call's ticket.
      await storeRecord(rig.db, {
        org_id: org.id,
        linkedid: "metrics-missed-1",
        channel: `PJSIP/${org.prefix}102-00000001`,
      });
      now = await scrape(rig, admin);
      assert.ok(now.value("pbx_ticket_poller_lag_seconds") > 0);
      const polled = await rig.running.tickets.poller!.tick();
      await rig.running.tickets.intake.idle();
      const tickets = await rig.db.selectFrom("tickets").select("source").execute();
      assert.ok(polled.sent >= 1 && tickets.length >= 1, JSON.stringify(polled));
      now = await scrape(rig, admin);
      assert.is(
        moved(now, "pbx_outbox_attempts_total", { outbox: "intake_posts", result: "2xx" }),
        polled.sent,
      );
      assert.is(
        moved(now, "pbx_outbox_delivery_latency_seconds_count", { outbox: "intake_posts" }),
        polled.sent,
      );
      for (const source of new Set(tickets.map((t) => t.source))) {
        assert.is(
          moved(now, "pbx_tickets_opened_total", { source }),
          tickets.filter((t) => t.source === source).length,
        );
      }
      assert.is(now.value("pbx_ticket_poller_lag_seconds"), 0);
      assert.is(now.value("pbx_outbox_depth", { outbox: "intake_posts" }), 0);

      // HTTP: the burst's ten saves under their route template, in flight: only this scrape.
      assert.is(
        moved(now, "pbx_http_request_duration_seconds_count", {
          route: "/api/v1/organizations/:id",
          method: "PUT",
          status_class: "2xx",
        }),
        10,
      );
      assert.is(
        moved(now, "pbx_http_request_duration_seconds_count", {
          route: "/api/v1/users",
          method: "POST",
          status_class: "2xx",
        }),
        1,
        "the new phone",
      );
      assert.is(now.value("pbx_http_requests_in_flight"), 1);
      assert.is(now.value("pbx_ready"), 1);
      // The default Node.js metrics.
      assert.ok(now.has("process_cpu_user_seconds_total"));
      assert.ok(now.has("nodejs_eventloop_lag_seconds"));

      const { problems, ran } = promtoolProblems(now.text);
      if (!ran) {
        console.warn(
          "\n!!! promtool not installed: `promtool check metrics` NOT run on the scrape " +
            "(apt-get install prometheus; CI installs it) !!!\n",
        );
      }
      assert.is(problems, null, `promtool check metrics: ${problems}`);
    }),
  ));

test("no org id, phone number or URL appears in a scrape after traffic from two orgs", () =>
  withReceiver((receiver) =>
    withRig({ ami: true, env: { PBX_WEBHOOK_ALLOW_PRIVATE: "1" } }, async (rig) => {
      const admin = await rig.adminHeaders();
      const orgs = [await rig.createOrg("Acme"), await rig.createOrg("Globex")];
      const numbers = ["+14155550101", "+442071838750"];
      const secrets: string[] = [receiver.url, `127.0.0.1:${receiver.port}`];
      for (const [i, org] of orgs.entries()) {
        const key = { "x-api-key": org.api_key };
        secrets.push(org.id, org.prefix, org.api_key, numbers[i]!);
        await insertDid(rig.db, org.id, numbers[i]!);
        const hook = await rig.request("POST", "/api/v1/webhooks", {
          headers: key,
          body: { url: `${receiver.url}/${org.id}`, events: ["call.initiated", "call.ended"] },
        });
        assert.is(hook.status, 201, hook.text);
        // Reads and writes of the org's own and of an unknown row, and a URL no route has.
        await rig.request("GET", `/api/v1/users?limit=5&q=${numbers[i]}`, { headers: key });
        await rig.request("GET", `/api/v1/users/${org.id}`, { headers: key });
        await rig.request("GET", `/api/v1/organizations/${org.id}`, { headers: key });
        await rig.request("GET", `/no/such/${org.id}/${encodeURIComponent(numbers[i]!)}`);
        await rig.request("POST", `/events/auto-ticket/${org.id}`, { body: { src: numbers[i] } });
        const events = rewriteOrgs(fixtures.get("missed-inbound")!.events, [[ORG_A, org.id]]);
        for (const event of events) rig.running.calls.feed(event);
      }
      await rig.running.calls.idle();
      await rig.advance(1000);
      await eventually(
        "every delivery attempted",
        async () => (await unfinishedDeliveries(rig)) === 0,
      );
      const text = (await scrape(rig, admin)).text;
      for (const secret of secrets) {
        assert.not.ok(text.includes(secret), `the scrape names ${secret}`);
        assert.not.ok(text.includes(secret.replace("+", "")), `the scrape names ${secret}`);
      }
      // Nor anything shaped like one: a UUID, a long digit string, an address.
      assert.not.match(text, /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/i);
      assert.not.match(text, /https?:\/\//);
      for (const sample of new Scrape(text).samples) {
        for (const [label, value] of Object.entries(sample.labels)) {
          assert.not.match(value, /\d{6,}/, `${sample.name}{${label}="${value}"}`);
        }
      }
    }),
  ));

test("/metrics on the API port is the admin's: no token 401, an org's key 403", () =>
  withRig({}, async (rig) => {
    const org = await rig.createOrg();
    const anonymous = await rig.request("GET", "/metrics");
    assert.is(anonymous.status, 401);
    const orgKey = await rig.request("GET", "/metrics", { headers: { "x-api-key": org.api_key } });
    assert.is(orgKey.status, 403);
    assert.equal(orgKey.body, { error: "Admin access required" });
  }));

test("PBX_METRICS_LISTEN serves /metrics with no auth, and nothing else", () =>
  withRig({ env: { PBX_METRICS_LISTEN: "127.0.0.1:0" } }, async (rig) => {
    const url = rig.running.metricsUrl;
    assert.ok(url, "a metrics listener");
    const res = await fetch(`${url}/metrics`);
    assert.is(res.status, 200);
    assert.match(res.headers.get("content-type") ?? "", /^text\/plain; version=0\.0\.4/);
    const scrape = new Scrape(await res.text());
    assert.is(scrape.value("pbx_ready"), 1);
    // A files-only engine has no AMI connection, so nothing says one is down.
    assert.not.ok(scrape.has("pbx_ami_connected"));
    const other = await fetch(`${url}/api/v1/users`);
    assert.is(other.status, 404);
    assert.equal(await other.json(), { error: "Not found" });
  }));

test("shutting down: the server answers not ready before it stops listening", () =>
  withRig({}, async (rig) => {
    const running = rig.running;
    assert.is((await rig.request("GET", "/health/ready")).status, 200);
    const closing = running.close();
    // close() flips readiness before anything else; the scrape gauge follows it.
    assert.is((await running.pbx.readiness.check()).shutting_down, true);
    await closing;
  }));

test.run();
