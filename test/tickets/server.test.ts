// `pbxctl serve` is the whole auto-ticket service: the intake answers under its own /events,
// and the poller's default PBX_EVENTS_URL is that address, so a call record in the store becomes
// a ticket with no other process. The intake refuses a request without the internal key.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pino } from "pino";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { startServer } from "../../src/api/server.js";
import { loadConfig } from "../../src/config.js";
import { noDeploys } from "../../src/domain/ports.js";
import { createTicketRepository } from "../../src/store/ticket-repository.js";
import { INTERNAL_KEY } from "../api/helpers.js";
import { eventually, storeRecord } from "./helpers.js";

/** Creates an org through the admin API of the server at `url` (admin password `pw`). */
async function createOrg(url: string): Promise<{ id: string; context_prefix: string }> {
  const admin = await fetch(`${url}/api/v1/admin/auth`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ admin_username: "admin", admin_password: "pw" }),
  });
  const { token } = (await admin.json()) as { token: string };
  const created = await fetch(`${url}/api/v1/organizations`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
    body: JSON.stringify({ name: "Acme" }),
  });
  return (await created.json()) as { id: string; context_prefix: string };
}

test("serve mounts the intake at /events and polls into it by default", async () => {
  const dir = mkdtempSync(join(tmpdir(), "pbx-tickets-"));
  const config = loadConfig(
    { PBX_ADMIN_PASSWORD: "pw", PBX_INTERNAL_KEY: INTERNAL_KEY },
    { dataDir: dir, port: 0, host: "127.0.0.1" },
  );
  const running = await startServer({
    config,
    logger: pino({ level: "silent" }),
    deployScheduler: noDeploys,
    env: {},
  });
  try {
    const org = await createOrg(running.url);
    const prefix = org.context_prefix;
    assert.ok(prefix, "the org has a context prefix");

    const body = JSON.stringify({
      linkedid: "direct-1",
      channel: `PJSIP/${prefix}trunk-1`,
      src: "919812345678",
      disposition: "NO ANSWER",
      direction: "inbound",
      calldate: "2026-03-01T10:00:00.000Z",
    });
    const refused = await fetch(`${running.url}/events/auto-ticket/${org.id}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body,
    });
    assert.is(refused.status, 401);
    const accepted = await fetch(`${running.url}/events/auto-ticket/${org.id}`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-internal-key": INTERNAL_KEY },
      body,
    });
    assert.is(accepted.status, 202);
    assert.equal(await accepted.json(), { accepted: true, duplicate: false });
    const bad = await fetch(`${running.url}/events/auto-ticket/not-a-uuid`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-internal-key": INTERNAL_KEY },
      body,
    });
    assert.is(bad.status, 400);
    assert.equal(await bad.json(), { error: "org_id must be a UUID" });

    const tickets = createTicketRepository(running.pbx.deps.db);
    const count = async () => (await tickets.list(org.id, {}, { limit: 10, offset: 0 })).total;
    await eventually("the direct POST's ticket", async () => (await count()) === 1);

    // A call record in the store, the poller's look: POSTed to this server's own /events.
    await storeRecord(running.pbx.deps.db, {
      linkedid: "polled-1",
      channel: `PJSIP/${prefix}trunk-2`,
      src: "919800000777",
    });
    assert.ok(running.tickets.poller, "the server runs the poller");
    const result = await running.tickets.poller!.tick();
    assert.equal(result, { queued: 1, sent: 1, failed: 0 });
    await running.tickets.intake.idle();
    assert.is(await count(), 2);
  } finally {
    await running.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test("with no PBX_INTERNAL_KEY the intake is still closed to others, and the server's own poller gets in", async () => {
  const dir = mkdtempSync(join(tmpdir(), "pbx-tickets-"));
  const config = loadConfig(
    { PBX_ADMIN_PASSWORD: "pw" },
    { dataDir: dir, port: 0, host: "127.0.0.1" },
  );
  assert.is(config.internalKey, null);
  const running = await startServer({
    config,
    logger: pino({ level: "silent" }),
    deployScheduler: noDeploys,
    env: {},
  });
  try {
    const { id: orgId, context_prefix: prefix } = await createOrg(running.url);
    const outside = await fetch(`${running.url}/events/auto-ticket/${orgId}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ linkedid: "x-1", disposition: "NO ANSWER", direction: "inbound" }),
    });
    assert.is(outside.status, 401, "an open intake would let anyone open tickets for any org");
    await storeRecord(running.pbx.deps.db, {
      linkedid: "polled-2",
      channel: `PJSIP/${prefix}trunk-2`,
      src: "919800000778",
    });
    const result = await running.tickets.poller!.tick();
    assert.equal(result, { queued: 1, sent: 1, failed: 0 }, "the poller carries the process's key");
    await running.tickets.intake.idle();
    const tickets = createTicketRepository(running.pbx.deps.db);
    assert.is((await tickets.list(orgId, {}, { limit: 10, offset: 0 })).total, 1);
  } finally {
    await running.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test.run();
