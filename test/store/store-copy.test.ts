// `pbxctl db copy` (issue 23): an install seeded through the API and the use cases with every
// kind of resource, on SQLite, copied into an empty PostgreSQL database. Every table's count and
// checksum must agree, the command refuses a target that holds rows, and the copied install must
// answer a scripted set of API reads exactly as the original does. Needs a PostgreSQL cluster:
// it runs under `npm run test:pg` (the copy's target), never on a SQLite-only run.
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { type CallTracking, startCallTracking } from "../../src/api/call-tracking.js";
import DbCopy, { type DbCopyResult } from "../../src/cli/commands/db/copy.js";
import { openTicketForCall } from "../../src/domain/tickets/tickets.js";
import { addToPool, adminHeaders, assignFromPool, orgKey } from "../api/dids-fixtures.js";
import { startTestApp, type TestApp } from "../api/helpers.js";
import { callFixtures, ORG_A, ORG_B, rewriteOrgs } from "../calls/fixture-events.js";
import { runCommand } from "../cli/run-command.js";
import { emptyStoreLocation, testPostgresUrl } from "./test-database.js";

const test = suite("db copy");
const adminUrl = testPostgresUrl();

type Org = { id: string; api_key: string; api_secret: string };

async function expect2xx(
  app: TestApp,
  method: string,
  path: string,
  headers: object,
  body?: unknown,
) {
  const res = await app.request(method, `/api/v1${path}`, {
    headers: headers as Record<string, string>,
    ...(body !== undefined ? { body } : {}),
  });
  assert.ok(res.status >= 200 && res.status < 300, `${method} ${path}: ${res.status} ${res.text}`);
  return res.body;
}

/** Every kind of resource, for two orgs where a kind is per org. */
async function seed(app: TestApp): Promise<{ orgs: Org[]; paths: string[] }> {
  const admin = await adminHeaders(app);
  const acme = await app.createOrg("Acme");
  const bravo = await app.createOrg("Bravo");
  // The first engine node takes both orgs: engine_nodes and org_placements hold rows.
  await expect2xx(app, "POST", "/admin/engine-nodes", admin, {
    name: "node-1",
    ami_username: "pbxctl",
    ami_secret: "Node-Secret",
    sip_address: "10.0.0.11:5060",
    capacity: 10,
  });
  const paths: string[] = [];
  for (const [n, org] of [acme, bravo].entries()) {
    const key = orgKey(org);
    const alice = await expect2xx(app, "POST", "/users", key, { extension: "2001", name: "Alice" });
    await expect2xx(app, "POST", "/users", key, { extension: "2002", name: "Bob" });
    const queue = await expect2xx(app, "POST", "/queues", key, { number: "600", name: "Sales" });
    const ivr = await expect2xx(app, "POST", "/ivrs", key, { name: "Main", extension: "500" });
    await expect2xx(app, "PUT", `/ivrs/${ivr.id}/menu`, key, {
      options: [
        { digit: "1", action_type: "extension", action_destination: "2001", description: "Alice" },
        { digit: "9", action_type: "hangup" },
      ],
    });
    const trunk = await expect2xx(app, "POST", "/trunks", key, {
      name: "carrier",
      host: "sip.carrier.example",
      username: "acct42",
      password: "s3cret!pw",
      registration: true,
    });
    const route = await expect2xx(app, "POST", "/outbound-routes", key, {
      name: "Mobile",
      patterns: ["_9XXXXXXXXX"],
      trunk: "carrier",
      strip_digits: 1,
      prepend_digits: "+91",
    });
    const pooled = await addToPool(app, `+9180659780${n + 10}`);
    await assignFromPool(app, org, pooled.id);
    const hook = await expect2xx(app, "POST", "/webhooks", key, {
      url: "https://hooks.example.invalid/pbx",
      events: ["crm.lead.created", "crm.client.created", "call.ended"],
    });
    const apiKey = await expect2xx(app, "POST", "/api-keys", key, {
      name: "crm",
      permissions: ["calls.read"],
    });
    await expect2xx(app, "POST", "/org-users", key, {
      email: `vera${n}@example.test`,
      role: "viewer",
    });
    const field = await expect2xx(app, "POST", "/crm/fields", key, {
      name: "budget",
      type: "number",
      required: false,
    });
    const lead = await expect2xx(app, "POST", "/crm/leads", key, {
      name: "Lena Lead",
      phone: "+15550001111",
      tags: ["vip", "emea"],
      custom_fields: { budget: 1200 },
    });
    const client = await expect2xx(app, "POST", "/crm/clients", key, { name: "Carl Client" });
    const consent = await expect2xx(app, "POST", "/compliance/consent", key, {
      phone: "+15550002222",
      recording_consent: "refused",
      source: "agent",
    });
    await expect2xx(app, "PUT", "/compliance/retention", key, { tickets: 90 });
    const tunnel = await expect2xx(app, "POST", "/admin/customer-tunnels", admin, {
      name: `Site ${n}`,
      gateway_address: `10.99.${n}.1/30`,
      customer_address: `10.99.${n}.2/30`,
      gateway_endpoint: "pbx.example.com:51820",
      customer_networks: ["192.168.10.0/24"],
      org_id: org.id,
    });
    const ticket = await openTicketForCall(
      { db: app.db, clock: () => app.clock.now },
      {
        orgId: org.id,
        source: "missed_call",
        phone: "+15550003333",
        channelId: "PJSIP/x-1",
        linkedid: `${n}.1`,
      },
    );
    paths.push(
      ...[
        "/users",
        `/users/${alice.id}`,
        "/queues",
        `/queues/${queue.id}`,
        "/ivrs",
        `/ivrs/${ivr.id}`,
        "/trunks",
        `/trunks/${trunk.id}`,
        "/outbound-routes",
        `/outbound-routes/${route.id}`,
        "/dids",
        "/did-pool/requests",
        "/webhooks",
        `/webhooks/${hook.id}`,
        `/webhooks/${hook.id}/deliveries`,
        "/api-keys",
        `/api-keys/${apiKey.id}`,
        "/org-users",
        "/crm/fields",
        `/crm/fields/${field.id}`,
        "/crm/leads",
        "/crm/leads?tag=vip",
        "/crm/leads?q=lena",
        `/crm/leads/${lead.id}`,
        "/crm/clients",
        `/crm/clients/${client.id}`,
        "/compliance/consent",
        `/compliance/consent/${consent.id}`,
        "/compliance/retention",
        "/compliance/audit",
        "/customer-tunnels",
        `/customer-tunnels/${tunnel.id}`,
        "/tickets",
        `/tickets/${ticket.ticket.id}`,
        "/calls/history",
        "/calls/history?direction=inbound",
        "/calls/count",
        "/settings",
      ].map((path) => `${org.api_key} ${path}`),
    );
  }
  // Call records, calls and journey steps of real engine event sequences, for both orgs.
  const fixtures = callFixtures();
  const tracking: CallTracking = startCallTracking({ db: app.db, clock: () => app.clock.now });
  await tracking.idle();
  tracking.live.resync([]);
  for (const scenario of ["inbound-ivr-queue", "missed-inbound", "internal", "outbound-busy"]) {
    for (const event of rewriteOrgs(fixtures.get(scenario)!.events, [
      [ORG_A, acme.id],
      [ORG_B, bravo.id],
      ["org_b_", `org_${bravo.id}_`],
    ])) {
      tracking.feed(event);
    }
    await tracking.idle();
  }
  await tracking.stop();
  paths.push(
    ...[
      "/organizations",
      "/did-pool/admin",
      "/admin/audit",
      "/admin/customer-tunnels",
      "/admin/engine-nodes",
    ].map((path) => `admin ${path}`),
  );
  return { orgs: [acme, bravo], paths };
}

/** The answers of the scripted reads, as status and body. */
async function answers(app: TestApp, paths: readonly string[], adminToken: string) {
  const out: Record<string, unknown> = {};
  for (const line of paths) {
    const [who, path] = line.split(" ") as [string, string];
    const headers: Record<string, string> =
      who === "admin" ? { authorization: `Bearer ${adminToken}` } : { "x-api-key": who };
    const res = await app.request("GET", `/api/v1${path}`, { headers });
    out[line] = { status: res.status, body: res.body };
  }
  return out;
}

if (adminUrl) {
  test("a SQLite install copied to PostgreSQL: equal counts and checksums, identical answers", async () => {
    const original = await startTestApp({ sqliteOnly: true });
    const target = await emptyStoreLocation("");
    const targetUrl = target.location.kind === "postgres" ? target.location.url : "";
    let copy: TestApp | undefined;
    try {
      const { paths } = await seed(original);
      const copied = await runCommand(DbCopy, [
        "--from",
        original.config.dbFile,
        "--to",
        targetUrl,
        "--json",
      ]);
      assert.is(copied.code, 0, copied.stderr + copied.stdout);
      const result = copied.result as DbCopyResult;
      assert.ok(result.exact);
      const byTable = new Map(result.tables.map((t) => [t.table, t]));
      for (const table of [
        "organizations",
        "users",
        "queues",
        "ivrs",
        "ivr_options",
        "trunks",
        "outbound_routes",
        "outbound_route_patterns",
        "dids",
        "did_requests",
        "extension_claims",
        "webhooks",
        "webhook_deliveries",
        "api_keys",
        "org_users",
        "crm_fields",
        "crm_records",
        "consent_records",
        "retention_policies",
        "audit_log",
        "customer_tunnels",
        "engine_nodes",
        "org_placements",
        "tickets",
        "ticket_history",
        "call_records",
        "calls",
        "call_events",
      ]) {
        const t = byTable.get(table);
        assert.ok(t, `table ${table} was not copied`);
        assert.ok(t.sourceRows > 0, `the seed left ${table} empty: it proves nothing`);
        assert.is(t.targetRows, t.sourceRows, table);
        assert.is(t.targetChecksum, t.sourceChecksum, table);
      }
      for (const t of result.tables) {
        assert.is(t.targetRows, t.sourceRows, t.table);
        assert.is(t.targetChecksum, t.sourceChecksum, t.table);
      }

      // A second copy into the now filled database is refused, and changes nothing.
      const again = await runCommand(DbCopy, ["--from", original.config.dbFile, "--to", targetUrl]);
      assert.is(again.code, 1);
      assert.match(
        `${again.stderr}${again.error?.message ?? ""}`,
        /the target is not empty \(\w+ has \d+ rows\)/,
      );

      copy = await startTestApp({
        install: {
          dataDir: original.config.dataDir,
          store: { kind: "postgres", url: targetUrl, poolSize: 4 },
        },
      });
      const token = await original.adminToken();
      const before = await answers(original, paths, token);
      const after = await answers(copy, paths, token);
      for (const line of paths) {
        const answer = before[line] as { status: number };
        assert.is(
          answer.status,
          200,
          `${line} did not answer on the original: ${JSON.stringify(answer)}`,
        );
        assert.equal(after[line], before[line], line);
      }
      // The copied store keeps generating ids after the copied ones.
      const [acmeKey] = paths[0]!.split(" ");
      const made = await copy.request("POST", "/api/v1/users", {
        headers: { "x-api-key": acmeKey! },
        body: { extension: "2003", name: "Cleo" },
      });
      assert.is(made.status, 201, made.text);
      const audit = await copy.request("GET", "/api/v1/compliance/audit", {
        headers: { "x-api-key": acmeKey! },
      });
      assert.is(audit.status, 200, audit.text);
    } finally {
      await copy?.close();
      await original.close();
      await target.drop();
    }
  });
}

test.run();
