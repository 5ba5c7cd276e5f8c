// The audit record is part of the change's transaction (issue 28 item 5): when the record cannot
// be written, the request fails and the change is not made, for org saves, admin actions and
// creations alike; when it can, change and record commit together.
import { sql } from "kysely";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { startTestApp, type TestApp } from "./helpers.js";

let app: TestApp;
let acme: { id: string; api_key: string };
const key = () => ({ "x-api-key": acme.api_key });

test.before(async () => {
  app = await startTestApp();
  acme = await app.createOrg("Acme");
});
test.after(async () => app.close());

/** Makes every audit insert fail until the returned function is called. */
async function breakAuditLog(): Promise<() => Promise<void>> {
  await sql`CREATE TRIGGER test_audit_down BEFORE INSERT ON audit_log
    BEGIN SELECT RAISE(ABORT, 'audit log unavailable'); END`.execute(app.db);
  return async () => {
    await sql`DROP TRIGGER test_audit_down`.execute(app.db);
  };
}

async function auditCount(): Promise<number> {
  const row = await sql<{ n: number }>`SELECT count(*) AS n FROM audit_log`.execute(app.db);
  return Number(row.rows[0]!.n);
}

test("a failing audit write fails an update, and the resource is unchanged", async () => {
  const created = await app.request("POST", "/api/v1/users", {
    headers: key(),
    body: { extension: "1001", name: "Alice" },
  });
  assert.is(created.status, 201, created.text);
  const records = await auditCount();
  const repair = await breakAuditLog();
  try {
    const res = await app.request("PUT", `/api/v1/users/${created.body.id}`, {
      headers: key(),
      body: { name: "Mallory" },
    });
    assert.is(res.status, 500, res.text);
    assert.not.match(res.text, "audit log unavailable", "internals stay hidden");
  } finally {
    await repair();
  }
  const after = await app.request("GET", `/api/v1/users/${created.body.id}`, { headers: key() });
  assert.is(after.body.name, "Alice", "the change was not made");
  assert.is(await auditCount(), records);
});

test("a failing audit write fails a creation and an admin action: nothing is made", async () => {
  const repair = await breakAuditLog();
  try {
    const user = await app.request("POST", "/api/v1/users", {
      headers: key(),
      body: { extension: "1002", name: "Bob" },
    });
    assert.is(user.status, 500, user.text);
    const admin = { authorization: `Bearer ${await app.adminToken()}` };
    const pooled = await app.request("POST", "/api/v1/did-pool/admin", {
      headers: admin,
      body: { number: "+442079460001" },
    });
    assert.is(pooled.status, 500, pooled.text);
    const renamed = await app.request("PUT", `/api/v1/admin/organizations/${acme.id}`, {
      headers: admin,
      body: { name: "Renamed" },
    });
    assert.is(renamed.status, 500, renamed.text);
  } finally {
    await repair();
  }
  const users = await app.request("GET", "/api/v1/users", { headers: key() });
  assert.not.ok(
    (users.body.data ?? users.body).some((u: { extension: string }) => u.extension === "1002"),
  );
  const admin = { authorization: `Bearer ${await app.adminToken()}` };
  const pool = await app.request("GET", "/api/v1/did-pool/admin?limit=500", { headers: admin });
  assert.not.ok(
    (pool.body.data ?? pool.body).some((d: { number: string }) => d.number === "+442079460001"),
  );
  const orgs = await app.request("GET", "/api/v1/organizations", { headers: admin });
  assert.ok(
    (orgs.body.data ?? orgs.body).some((o: { name: string }) => o.name === "Acme"),
    "the org keeps its name",
  );
});

test("a change and its record commit together", async () => {
  const records = await auditCount();
  const res = await app.request("POST", "/api/v1/queues", {
    headers: key(),
    body: { number: "600", name: "Sales" },
  });
  assert.is(res.status, 201, res.text);
  assert.is(await auditCount(), records + 1);
});

test.run();
