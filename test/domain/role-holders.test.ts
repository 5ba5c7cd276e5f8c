// Who holds each role, for admins (`GET /admin/replica-roles`), and the kinds `/health` says to
// anyone: a lease's name carries an AMI address or a node's id; its kind never does.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { createEngineNode } from "../../src/domain/nodes/engine-nodes.js";
import { listRoleHolders, roleKinds } from "../../src/domain/operations/role-holders.js";
import { createLeaseRepository } from "../../src/store/lease-repository.js";
import { startTestApp } from "../api/helpers.js";

const T0 = Date.parse("2026-03-01T10:00:00.000Z");

test("roleKinds: each kind once, in order, with nothing after the first colon", () => {
  assert.equal(
    roleKinds([
      "deployer:node:0b5c1f1e-7a4b-4c1e-9a55-5f0f2b1c9d10",
      "deployer:10.0.0.5:5038",
      "call-ingest:10.0.0.5:5038",
      "ticket-poller",
      "retention",
    ]),
    ["deployer", "call-ingest", "ticket-poller", "retention"],
  );
  assert.equal(roleKinds([]), []);
});

test("every lease with its role, its engine by node name, its holder and whether it is held now", async () => {
  const app = await startTestApp();
  let now = T0;
  const clock = () => new Date(now);
  try {
    const node = await createEngineNode(
      { db: app.db, config: app.config, clock },
      {
        name: "node-1",
        ami_username: "pbxctl",
        ami_secret: "secret",
        sip_address: "10.0.0.11",
        capacity: 5,
      },
    );
    const leases = createLeaseRepository(app.db);
    await leases.acquire(`deployer:node:${node.id}`, "api-1", new Date(T0), 4000);
    await leases.acquire("deployer:10.0.0.5:5038", "api-2", new Date(T0 - 10_000), 4000);
    await leases.acquire("retention", "api-2", new Date(T0), 4000);
    const rows = await listRoleHolders({ db: app.db, clock });
    assert.equal(
      rows.map((row) => [row.lease, row.role, row.engine, row.holder, row.held]),
      [
        ["deployer:10.0.0.5:5038", "deployer", "10.0.0.5:5038", "api-2", false],
        [`deployer:node:${node.id}`, "deployer", "node-1", "api-1", true],
        ["retention", "retention", null, "api-2", true],
      ],
    );
    // Past the expiry nobody holds them, until a replica takes them again.
    now = T0 + 4000;
    assert.equal(
      (await listRoleHolders({ db: app.db, clock })).map((row) => row.held),
      [false, false, false],
    );
  } finally {
    await app.close();
  }
});

test.run();
