// Compliance (issue 16): the audit record of each mutation kind, RBAC on /compliance/*, filters,
// pagination and exports of the audit log, retention policies and a purge that deletes exactly
// what one org holds too long, and recording consent records.
import { mkdirSync, mkdtempSync, readdirSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { sql } from "kysely";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { StoreBuilds } from "../../src/deploy/store-builds.js";
import { API_KEY_PERMISSIONS } from "../../src/domain/access/permissions.js";
import { insertCallRecord } from "../../src/store/call-record-repository.js";
import { bearer, expectError, rowsOf, startTestApp, type TestApp } from "./helpers.js";
import { startIdentityProvider, type TestIdentityProvider } from "./identity-provider.js";

const test = suite("compliance API");
const recordings = mkdtempSync(join(tmpdir(), "pbx-retention-"));
let idp: TestIdentityProvider;
let app: TestApp;
let acme: { id: string; api_key: string };
let bravo: { id: string; api_key: string };
const key = (org: { api_key: string }) => ({ "x-api-key": org.api_key });

test.before(async () => {
  idp = await startIdentityProvider();
  app = await startTestApp({ env: { ...idp.env, PBX_RECORDINGS_DIR: recordings } });
  acme = await app.createOrg("Acme");
  bravo = await app.createOrg("Bravo");
});
test.after(async () => {
  await app.close();
  await idp.close();
});

async function audit(org: { api_key: string }, query = "") {
  const res = await app.request("GET", `/api/v1/compliance/audit${query}`, { headers: key(org) });
  assert.is(res.status, 200, res.text);
  return res;
}

async function lastRecord(org: { api_key: string }) {
  const res = await audit(org, "?limit=500");
  const rows = rowsOf(res);
  return rows[rows.length - 1];
}

/** A platform user of `org` with `role`, signed in through the identity provider. */
async function userOf(org: { api_key: string }, role: string, name: string) {
  const email = `${name}@example.test`;
  const added = await app.request("POST", "/api/v1/org-users", {
    headers: key(org),
    body: { email, role },
  });
  assert.is(added.status, 201, added.text);
  const signedIn = await app.request("POST", "/api/v1/auth/user-login", {
    body: { idp_token: await idp.idToken({ sub: `idp|${name}`, email }) },
  });
  assert.is(signedIn.status, 200, signedIn.text);
  return { id: added.body.id as string, headers: bearer(signedIn.body.token) };
}

test("create, update and delete through the API each append one record with before/after", async () => {
  const created = await app.request("POST", "/api/v1/users", {
    headers: key(acme),
    body: { extension: "2001", name: "Alice" },
  });
  assert.is(created.status, 201, created.text);
  const id = created.body.id as string;
  const create = await lastRecord(acme);
  assert.is(create.action, "create");
  assert.is(create.resource_type, "users");
  assert.is(create.resource_id, id);
  assert.equal(create.actor, { kind: "org_key", id: null });
  assert.is(create.operation, "POST /users");
  assert.is(create.before, null);
  assert.is(create.after.extension, "2001");
  assert.is(create.schedules_deploy, true);
  assert.ok(/^[0-9a-f-]{36}$/.test(create.request_id), create.request_id);
  assert.is(create.request_id, created.headers.get("x-request-id"));

  const updated = await app.request("PUT", `/api/v1/users/${id}`, {
    headers: key(acme),
    body: { name: "Alice Smith" },
  });
  assert.is(updated.status, 200, updated.text);
  const update = await lastRecord(acme);
  assert.is(update.action, "update");
  assert.is(update.before.name, "Alice");
  assert.is(update.after.name, "Alice Smith");
  assert.ok(
    update.diff.some(
      (d: { path: string; before: unknown; after: unknown }) =>
        d.path === "name" && d.before === "Alice" && d.after === "Alice Smith",
    ),
    JSON.stringify(update.diff),
  );

  const deleted = await app.request("DELETE", `/api/v1/users/${id}`, { headers: key(acme) });
  assert.is(deleted.status, 204, deleted.text);
  const remove = await lastRecord(acme);
  assert.is(remove.action, "delete");
  assert.is(remove.resource_id, id);
  assert.is(remove.before.name, "Alice Smith");
  assert.is(remove.after, null);

  // A refused change writes nothing: no record.
  const before = (await audit(acme)).body.total;
  const refused = await app.request("POST", "/api/v1/users", {
    headers: key(acme),
    body: { extension: "x" },
  });
  assert.is(refused.status, 400);
  assert.is((await audit(acme)).body.total, before);
  // Reads write nothing either, and Bravo's log has none of Acme's records.
  await app.request("GET", "/api/v1/users", { headers: key(acme) });
  assert.is((await audit(acme)).body.total, before);
  assert.not.ok(rowsOf(await audit(bravo)).some((r) => r.resource_type === "users"));
});

test("secrets never reach the log: an ak_ key's creation and an admin's secret regeneration", async () => {
  const made = await app.request("POST", "/api/v1/api-keys", {
    headers: key(acme),
    body: { name: "crm", permissions: ["calls.read"] },
  });
  assert.is(made.status, 201, made.text);
  const record = await lastRecord(acme);
  assert.is(record.resource_type, "api-keys");
  assert.is(record.after.name, "crm");
  assert.ok([undefined, "[redacted]"].includes(record.after.api_secret));
  const text = JSON.stringify(record);
  assert.not.ok(text.includes(made.body.api_key), "the key is not in the record");
  assert.not.ok(text.includes(made.body.api_secret), "the secret is not in the record");

  const admin = bearer(await app.adminToken());
  const regenerated = await app.request(
    "POST",
    `/api/v1/admin/organizations/${bravo.id}/regenerate-secret`,
    { headers: admin },
  );
  assert.is(regenerated.status, 200, regenerated.text);
  const adminRecord = await lastRecord(bravo);
  assert.equal(adminRecord.actor, { kind: "admin", id: "admin" });
  assert.is(adminRecord.resource_type, "organizations");
  assert.is(adminRecord.resource_id, bravo.id);
  assert.is(adminRecord.action, "regenerate-secret");
  assert.not.ok(JSON.stringify(adminRecord).includes(regenerated.body.api_secret));
  // The admin's new secret does not change Bravo's key; the admin's record is Bravo's only.
  assert.not.ok(
    rowsOf(await audit(acme)).some((r) => r.actor.kind === "admin" && r.resource_id === bravo.id),
  );
});

test("the admin's view: every org's records and those of no org; org credentials are refused", async () => {
  const admin = bearer(await app.adminToken());
  const pooled = await app.request("POST", "/api/v1/did-pool/admin", {
    headers: admin,
    body: { number: "+918065978077" },
  });
  assert.is(pooled.status, 201, pooled.text);
  const noOrg = await app.request("GET", "/api/v1/admin/audit?no_org=true", { headers: admin });
  assert.is(noOrg.status, 200, noOrg.text);
  const pool = rowsOf(noOrg).find((r) => r.operation === "POST /did-pool/admin");
  assert.ok(pool, JSON.stringify(rowsOf(noOrg)));
  assert.is(pool.org_id, null);
  assert.equal(pool.actor, { kind: "admin", id: "admin" });
  assert.is(pool.after.number, "+918065978077");
  // No org lists it.
  assert.not.ok(rowsOf(await audit(acme, "?limit=500")).some((r) => r.id === pool.id));
  const all = await app.request("GET", "/api/v1/admin/audit?limit=500", { headers: admin });
  const orgs = new Set(rowsOf(all).map((r) => r.org_id));
  assert.ok(orgs.has(acme.id) && orgs.has(bravo.id) && orgs.has(null), [...orgs].join(", "));
  const one = await app.request("GET", `/api/v1/admin/audit?org_id=${bravo.id.toUpperCase()}`, {
    headers: admin,
  });
  assert.ok(rowsOf(one).length > 0);
  assert.ok(rowsOf(one).every((r) => r.org_id === bravo.id));
  expectError(
    await app.request("GET", "/api/v1/admin/audit", { headers: key(acme) }),
    403,
    "Admin access required",
  );
});

test("RBAC: org key, owner and admin read and write; member roles and ak_ keys are refused", async () => {
  const owner = await userOf(acme, "owner", "olga");
  const admin = await userOf(acme, "admin", "adam");
  const manager = await userOf(acme, "manager", "mia");
  const viewer = await userOf(acme, "viewer", "vic");
  const ak = await app.request("POST", "/api/v1/api-keys", {
    headers: key(acme),
    body: { name: "all", permissions: [...API_KEY_PERMISSIONS] },
  });
  const akKey = { "x-api-key": ak.body.api_key as string };
  for (const headers of [key(acme), owner.headers, admin.headers]) {
    assert.is((await app.request("GET", "/api/v1/compliance/audit", { headers })).status, 200);
    const put = await app.request("PUT", "/api/v1/compliance/retention", {
      headers,
      body: { tickets: 90 },
    });
    assert.is(put.status, 200, put.text);
  }
  for (const [role, user] of [
    ["manager", manager],
    ["viewer", viewer],
  ] as const) {
    expectError(
      await app.request("GET", "/api/v1/compliance/audit", { headers: user.headers }),
      403,
      `Role '${role}' lacks permission: compliance.read`,
    );
    expectError(
      await app.request("POST", "/api/v1/compliance/consent", {
        headers: user.headers,
        body: { phone: "+15550001111", recording_consent: "refused", source: "agent" },
      }),
      403,
      `Role '${role}' lacks permission: compliance.write`,
    );
  }
  expectError(
    await app.request("GET", "/api/v1/compliance/consent", { headers: akKey }),
    403,
    "API key lacks permission: compliance.read",
  );
  expectError(await app.request("GET", "/api/v1/compliance/audit"), 401, "Authentication required");
  // The platform user's change names them.
  await app.request("PUT", "/api/v1/compliance/retention", {
    headers: owner.headers,
    body: { tickets: 120 },
  });
  const record = await lastRecord(acme);
  assert.equal(record.actor, { kind: "user", id: owner.id });
  assert.is(record.resource_type, "compliance/retention");
  assert.is(record.action, "update");
  assert.is(record.before.tickets, 90);
  assert.is(record.after.tickets, 120);
});

test("filters, pagination and the deploy revision a change led to", async () => {
  for (const number of ["4601", "4602", "4603"]) {
    const res = await app.request("POST", "/api/v1/queues", {
      headers: key(acme),
      body: { number, name: `Q${number}` },
    });
    assert.is(res.status, 201, res.text);
  }
  const queues = await audit(acme, "?resource_type=queues&action=create&limit=2");
  assert.is(queues.body.total, 3);
  assert.is(rowsOf(queues).length, 2);
  assert.is(queues.headers.get("x-total-count"), "3");
  const rest = await audit(acme, "?resource_type=queues&action=create&limit=2&offset=2");
  assert.is(rowsOf(rest)[0].after.number, "4603");
  // The admin made the org: that record is Acme's, by the admin.
  const byAdmin = rowsOf(await audit(acme, "?actor_kind=admin"));
  assert.equal(
    byAdmin.map((r) => [r.resource_type, r.action, r.resource_id]),
    [["organizations", "create", acme.id]],
  );
  const future = "?from=2030-01-01T00:00:00Z";
  assert.is((await audit(acme, future)).body.total, 0);
  assert.ok((await audit(acme, "?to=2030-01-01T00:00:00Z")).body.total > 3);
  expectError(
    await app.request("GET", "/api/v1/compliance/audit?actor_kind=robot", { headers: key(acme) }),
    400,
    (await app.request("GET", "/api/v1/compliance/audit?actor_kind=robot", { headers: key(acme) }))
      .body.error,
  );

  // The deploy that applied the change, recorded after it, is named on the record.
  const last = rowsOf(rest)[0];
  assert.is(last.deploy_revision, null);
  const prefix = (
    await app.db
      .selectFrom("organizations")
      .select("context_prefix")
      .where("id", "=", acme.id)
      .executeTakeFirstOrThrow()
  ).context_prefix;
  const at = new Date(app.clock.now.getTime() + 1000).toISOString();
  await sql`INSERT INTO deploy_records (id, unit, revision, result, trigger, started_at, record)
    VALUES ('11111111-1111-4111-8111-111111111111', ${`org:${prefix}`}, 'rev-after-queues', 'ok',
      'schedule', ${at}, '{}')`.execute(app.db);
  const again = await audit(acme, "?resource_type=queues&action=create&limit=1&offset=2");
  assert.is(rowsOf(again)[0].deploy_revision, "rev-after-queues");
  // A change that asks for no deploy (an ak_ key) names none.
  const keys = rowsOf(await audit(acme, "?resource_type=api-keys"));
  assert.ok(keys.length > 0);
  assert.ok(keys.every((r) => r.schedules_deploy === false && r.deploy_revision === null));
});

/** RFC 4180 rows of `text` (quoted fields, doubled quotes, CRLF). */
function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = "";
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        field += '"';
        i++;
      } else if (c === '"') quoted = false;
      else field += c;
    } else if (c === '"') quoted = true;
    else if (c === ",") {
      row.push(field);
      field = "";
    } else if (c === "\r" && text[i + 1] === "\n") {
      row.push(field);
      rows.push(row);
      row = [];
      field = "";
      i++;
    } else field += c;
  }
  return rows;
}

test("consent records: create, duplicate, get, list, delete; another org sees none", async () => {
  const deploysBefore = app.deploys.length;
  const created = await app.request("POST", "/api/v1/compliance/consent", {
    headers: key(acme),
    body: {
      phone: "+15551234567",
      recording_consent: "refused",
      source: 'web, "form"\u00e9',
      recorded_at: "2025-12-31T10:00:00Z",
    },
  });
  assert.is(created.status, 201, created.text);
  assert.is(created.body.recorded_at, "2025-12-31T10:00:00.000Z");
  assert.equal(app.deploys.slice(deploysBefore), [acme.id], "a refusal schedules a deploy");
  const id = created.body.id as string;
  expectError(
    await app.request("POST", "/api/v1/compliance/consent", {
      headers: key(acme),
      body: { phone: "+15551234567", recording_consent: "given", source: "ivr" },
    }),
    409,
    "Consent for +15551234567 is already recorded",
  );
  const badPhone = await app.request("POST", "/api/v1/compliance/consent", {
    headers: key(acme),
    body: { phone: "15551234567", recording_consent: "given", source: "ivr" },
  });
  assert.is(badPhone.status, 400);
  assert.match(badPhone.body.error, /E\.164/);
  const given = await app.request("POST", "/api/v1/compliance/consent", {
    headers: key(acme),
    body: { phone: "+15559876543", recording_consent: "given", source: "ivr" },
  });
  assert.is(given.status, 201);
  const got = await app.request("GET", `/api/v1/compliance/consent/${id}`, { headers: key(acme) });
  assert.is(got.body.phone, "+15551234567");
  const refused = await app.request("GET", "/api/v1/compliance/consent?recording_consent=refused", {
    headers: key(acme),
  });
  assert.equal(
    rowsOf(refused).map((r) => r.phone),
    ["+15551234567"],
  );
  expectError(
    await app.request("GET", `/api/v1/compliance/consent/${id}`, { headers: key(bravo) }),
    404,
    "Consent record not found",
  );
  expectError(
    await app.request("DELETE", `/api/v1/compliance/consent/${id}`, { headers: key(bravo) }),
    404,
    "Consent record not found",
  );
  assert.equal(
    rowsOf(await app.request("GET", "/api/v1/compliance/consent", { headers: key(bravo) })),
    [],
  );

  // The export carries the awkward source intact, in NDJSON and in CSV.
  const ndjson = await app.request(
    "GET",
    "/api/v1/compliance/audit/export?resource_type=compliance/consent&action=create",
    {
      headers: key(acme),
    },
  );
  assert.is(ndjson.status, 200, ndjson.text);
  assert.match(ndjson.headers.get("content-type")!, /^application\/x-ndjson/);
  const lines = ndjson.text
    .trim()
    .split("\n")
    .map((line) => JSON.parse(line));
  assert.is(lines.length, 2);
  assert.is(lines[0].after.source, 'web, "form"\u00e9');
  const csv = await app.request(
    "GET",
    "/api/v1/compliance/audit/export?format=csv&resource_type=compliance/consent&action=create",
    {
      headers: key(acme),
    },
  );
  assert.match(csv.headers.get("content-type")!, /^text\/csv/);
  const rows = parseCsv(csv.text);
  assert.is(rows.length, 3);
  const header = rows[0]!;
  const after = JSON.parse(rows[1]![header.indexOf("after")]!);
  assert.is(after.source, 'web, "form"\u00e9');
  assert.is(rows[1]![header.indexOf("action")], "create");

  const removed = await app.request("DELETE", `/api/v1/compliance/consent/${id}`, {
    headers: key(acme),
  });
  assert.is(removed.status, 204);
  const record = await lastRecord(acme);
  assert.is(record.action, "delete");
  assert.is(record.resource_type, "compliance/consent");
  assert.is(record.before.phone, "+15551234567");
  expectError(
    await app.request("GET", `/api/v1/compliance/consent/${id}`, { headers: key(acme) }),
    404,
    "Consent record not found",
  );
});

test("a refused number reaches the org's compiled dialplan; deleting it takes it out", async () => {
  const builds = new StoreBuilds({
    db: app.db,
    gateway: { environment: "prod", staging_endpoint: "staging-tunnel" },
  });
  const user = await app.request("POST", "/api/v1/users", {
    headers: key(bravo),
    body: { extension: "3001", name: "Rita" },
  });
  assert.is(user.status, 201, user.text);
  const dialplan = async () =>
    (await builds.orgFiles(bravo.id)).files.find((f) => f.path.endsWith("/extensions.conf"))!
      .content;
  assert.not.match(await dialplan(), "consent_refused");
  const refused = await app.request("POST", "/api/v1/compliance/consent", {
    headers: key(bravo),
    body: { phone: "+15557654321", recording_consent: "refused", source: "ivr" },
  });
  assert.is(refused.status, 201, refused.text);
  const text = await dialplan();
  assert.match(text, "exten => +15557654321,1,Hangup()");
  assert.match(text, "DIALPLAN_EXISTS(");
  const deploys = app.deploys.length;
  const removed = await app.request("DELETE", `/api/v1/compliance/consent/${refused.body.id}`, {
    headers: key(bravo),
  });
  assert.is(removed.status, 204);
  assert.equal(app.deploys.slice(deploys), [bravo.id], "the deletion schedules a deploy");
  assert.not.match(await dialplan(), "consent_refused");
});

test("retention: defaults, bounds, and a purge of exactly what is too old, in one org only", async () => {
  const policy = await app.request("GET", "/api/v1/compliance/retention", { headers: key(bravo) });
  assert.equal(policy.body, { call_records: null, recordings: null, tickets: null, audit: null });
  for (const body of [{ call_records: 0 }, { audit: 36501 }, { emails: 3 }, {}]) {
    const res = await app.request("PUT", "/api/v1/compliance/retention", {
      headers: key(bravo),
      body,
    });
    assert.is(res.status, 400, JSON.stringify(body));
  }

  // Both orgs hold call records and recordings 40 and 10 days old; only Acme keeps 30 days.
  const now = app.clock.now.getTime();
  const day = 24 * 60 * 60 * 1000;
  let n = 0;
  for (const org of [acme, bravo]) {
    mkdirSync(join(recordings, org.id), { recursive: true });
    for (const age of [40, 10]) {
      n += 1;
      const date = new Date(now - age * day).toISOString();
      await insertCallRecord(app.db, {
        org_id: org.id,
        uniqueid: `u${n}`,
        sequence: n,
        linkedid: `u${n}`,
        calldate: date,
        answerdate: null,
        enddate: null,
        src: "100",
        dst: "200",
        dcontext: "x",
        clid: "x",
        channel: "PJSIP/x",
        dstchannel: "",
        lastapp: "Dial",
        lastdata: "",
        duration: 1,
        billsec: 1,
        disposition: "ANSWERED",
        accountcode: org.id,
        peeraccount: "",
        direction: "internal",
        recording_file: `${org.id}/u${n}.wav`,
        ingested_at: date,
      });
      const file = join(recordings, org.id, `u${n}.wav`);
      writeFileSync(file, "RIFF");
      utimesSync(file, new Date(now - age * day), new Date(now - age * day));
    }
  }
  const set = await app.request("PUT", "/api/v1/compliance/retention", {
    headers: key(acme),
    body: { call_records: 30, recordings: 30, audit: 1 },
  });
  assert.is(set.status, 200, set.text);
  assert.is(set.body.call_records, 30);
  assert.is(set.body.tickets, 120, "kinds not named keep their value");

  // Two days on, every audit record of Acme made so far is older than its 1-day policy.
  app.clock.advance(2 * 24 * 60 * 60);
  const acmeAudit = (await audit(acme)).body.total as number;
  const bravoAudit = (await audit(bravo)).body.total as number;
  const dry = await app.request("POST", "/api/v1/compliance/retention/purge", {
    headers: key(acme),
    body: { dry_run: true },
  });
  assert.is(dry.status, 200, dry.text);
  assert.is(dry.body.dry_run, true);
  assert.is(dry.body.kinds.call_records.deleted, 1);
  assert.is(dry.body.kinds.recordings.deleted, 1);
  assert.is(dry.body.kinds.audit.deleted, acmeAudit);
  assert.is(dry.body.kinds.tickets.days, 120);
  assert.is(dry.body.kinds.tickets.deleted, 0, "Acme has no tickets");
  assert.is(dry.body.kinds.tickets.supported, true);
  assert.is(readdirSync(join(recordings, acme.id)).length, 2, "a dry run deletes nothing");

  const run = await app.request("POST", "/api/v1/compliance/retention/purge", {
    headers: key(acme),
    body: {},
  });
  assert.is(run.status, 200, run.text);
  assert.is(run.body.kinds.call_records.deleted, 1);
  assert.is(run.body.kinds.recordings.deleted, 1);
  // The dry run's own record is newer than the cutoff: it stays, with the purge's record.
  assert.is(run.body.kinds.audit.deleted, acmeAudit);
  const left = await app.db.selectFrom("call_records").select(["org_id", "calldate"]).execute();
  assert.is(left.filter((r) => r.org_id === acme.id).length, 1);
  assert.is(left.filter((r) => r.org_id === bravo.id).length, 2, "Bravo's records untouched");
  assert.equal(readdirSync(join(recordings, acme.id)), ["u2.wav"]);
  assert.is(readdirSync(join(recordings, bravo.id)).length, 2, "Bravo's files untouched");
  const remaining = rowsOf(await audit(acme, "?limit=500"));
  assert.equal(
    remaining.map((r) => r.action),
    ["purge", "purge"],
  );
  assert.is((await audit(bravo)).body.total, bravoAudit, "Bravo's audit log untouched");
});

test.run();
