// Engine nodes and placement on the real app (issue 25): admin-only CRUD with the AMI secret
// sealed and never answered, the first node taking every existing org, least-loaded placement of
// new orgs, capacity and drain, pinning, placement shown to admins only, and an install with no
// node working exactly as before (no placement, orgs created as always).
import { test } from "uvu";
import * as assert from "uvu/assert";
import { decrypt } from "../../src/domain/secrets.js";
import { adminHeaders, orgKey } from "./dids-fixtures.js";
import { expectError, startTestApp, type TestApp } from "./helpers.js";

const NODES = "/api/v1/admin/engine-nodes";

function node(name: string, capacity: number, extra: Record<string, unknown> = {}) {
  return {
    name,
    ami_host: "10.0.0.11",
    ami_username: "pbxctl",
    ami_secret: "s3cret-Value",
    sip_address: "10.0.0.11:5060",
    capacity,
    ...extra,
  };
}

async function addNode(app: TestApp, body: unknown) {
  const res = await app.request("POST", NODES, { headers: await adminHeaders(app), body });
  assert.is(res.status, 201, res.text);
  return res.body;
}

async function placementOf(app: TestApp, orgId: string) {
  const res = await app.request("GET", `/api/v1/admin/organizations/${orgId}/placement`, {
    headers: await adminHeaders(app),
  });
  assert.is(res.status, 200, res.text);
  assert.is(res.body.org_id, orgId);
  return res.body.placement;
}

test("no node defined: orgs are created as before, with no placement; nodes list is empty", async () => {
  const app = await startTestApp();
  try {
    const org = await app.createOrg("Acme");
    assert.is(await placementOf(app, org.id), null);
    const listed = await app.request("GET", NODES, { headers: await adminHeaders(app) });
    assert.equal(listed.body.data, []);
    const orgs = await app.request("GET", "/api/v1/organizations", {
      headers: await adminHeaders(app),
    });
    assert.is(orgs.body.data[0].placement, null);
    assert.equal(app.deploys, [org.id], "the new org is deployed as before");
    assert.is((await app.db.selectFrom("org_placements").selectAll().execute()).length, 0);
  } finally {
    await app.close();
  }
});

test("the secret is sealed and never answered; the first node takes every existing org", async () => {
  const app = await startTestApp();
  try {
    const before = [await app.createOrg("A"), await app.createOrg("B")];
    expectError(
      await app.request("POST", NODES, {
        headers: await adminHeaders(app),
        body: node("node-1", 1),
      }),
      409,
      "Engine node 'node-1' has room for 1 organizations; the first node takes every existing one (2)",
    );
    assert.is((await app.db.selectFrom("engine_nodes").selectAll().execute()).length, 0);
    const created = await addNode(app, node("node-1", 10));
    assert.is(created.orgs, 2);
    assert.is(created.ami_port, 5038);
    assert.is(created.state, "active");
    assert.not.ok(JSON.stringify(created).includes("s3cret"), "the secret is never answered");
    assert.not.ok("ami_secret" in created);
    const stored = await app.db.selectFrom("engine_nodes").selectAll().executeTakeFirstOrThrow();
    assert.match(stored.ami_secret_sealed, /^v1\./);
    assert.is(decrypt(stored.ami_secret_sealed, app.config.serverKey), "s3cret-Value");
    for (const org of before) {
      const placement = await placementOf(app, org.id);
      assert.is(placement.node, "node-1");
      assert.is(placement.pinned, false);
    }
    const got = await app.request("GET", `${NODES}/${created.id}`, {
      headers: await adminHeaders(app),
    });
    assert.not.ok(JSON.stringify(got.body).includes("s3cret"));
    expectError(
      await app.request("POST", NODES, {
        headers: await adminHeaders(app),
        body: node("node-1", 5),
      }),
      409,
      "Engine node 'node-1' already exists",
    );
  } finally {
    await app.close();
  }
});

test("new orgs go to the least-loaded active node with room; full and draining nodes take none", async () => {
  const app = await startTestApp();
  try {
    const big = await addNode(app, node("big", 4));
    const small = await addNode(app, node("small", 2));
    const placed: string[] = [];
    for (const name of ["o1", "o2", "o3", "o4", "o5", "o6"]) {
      const org = await app.createOrg(name);
      placed.push((await placementOf(app, org.id)).node);
    }
    // By share of capacity taken, then fewest orgs, then name: big 0/4 and small 0/2 tie (big by
    // name); then small 0/2; then big 1/4; big 2/4 and small 1/2 tie on share, small holds fewer.
    assert.equal(placed, ["big", "small", "big", "small", "big", "big"]);
    const refused = await app.request("POST", "/api/v1/organizations", {
      headers: await adminHeaders(app),
      body: { name: "o7" },
    });
    expectError(refused, 409, "No active engine node has room for another organization");
    const names = (
      await app.request("GET", "/api/v1/organizations", { headers: await adminHeaders(app) })
    ).body.data.map((o: { name: string }) => o.name);
    assert.not.ok(names.includes("o7"), "an org that finds no room is not created");

    await app.request("PUT", `${NODES}/${big.id}`, {
      headers: await adminHeaders(app),
      body: { capacity: 10 },
    });
    const drained = await app.request("POST", `${NODES}/${big.id}/drain`, {
      headers: await adminHeaders(app),
    });
    assert.is(drained.status, 200, drained.text);
    assert.is(drained.body.state, "draining");
    assert.is(drained.body.orgs, 4, "a draining node keeps its orgs");
    expectError(
      await app.request("POST", "/api/v1/organizations", {
        headers: await adminHeaders(app),
        body: { name: "o8" },
      }),
      409,
      "No active engine node has room for another organization",
    );
    await app.request("PUT", `${NODES}/${small.id}`, {
      headers: await adminHeaders(app),
      body: { capacity: 3 },
    });
    const o9 = await app.createOrg("o9");
    assert.is((await placementOf(app, o9.id)).node, "small");
    expectError(
      await app.request("PUT", `${NODES}/${small.id}`, {
        headers: await adminHeaders(app),
        body: { capacity: 2 },
      }),
      409,
      "Engine node 'small' holds 3 organizations: its capacity cannot be below that",
    );
  } finally {
    await app.close();
  }
});

test("pin: to an active node with room, standby on another node; shown in the admin listing", async () => {
  const app = await startTestApp();
  try {
    const one = await addNode(app, node("node-1", 5));
    const two = await addNode(app, node("node-2", 1, { sip_address: "10.0.0.12" }));
    const a = await app.createOrg("A");
    const b = await app.createOrg("B");
    assert.is((await placementOf(app, a.id)).node, "node-1");
    assert.is((await placementOf(app, b.id)).node, "node-2");
    const admin = await adminHeaders(app);
    const path = `/api/v1/admin/organizations/${a.id}/placement`;
    expectError(
      await app.request("PUT", path, { headers: admin, body: { node: "node-2" } }),
      409,
      "Engine node 'node-2' is full (1 organizations)",
    );
    expectError(
      await app.request("PUT", path, { headers: admin, body: { node: "node-3" } }),
      404,
      "Engine node not found",
    );
    expectError(
      await app.request("PUT", path, {
        headers: admin,
        body: { node: "node-1", standby_node: "node-1" },
      }),
      400,
      "standby_node must be another node than the primary node",
    );
    const pinned = await app.request("PUT", path, {
      headers: admin,
      body: { node: one.id, standby_node: "node-2" },
    });
    assert.is(pinned.status, 200, pinned.text);
    assert.equal(
      { node: pinned.body.node, standby: pinned.body.standby_node, pinned: pinned.body.pinned },
      { node: "node-1", standby: "node-2", pinned: true },
    );
    await app.request("POST", `${NODES}/${one.id}/drain`, { headers: admin });
    expectError(
      await app.request("PUT", `/api/v1/admin/organizations/${b.id}/placement`, {
        headers: admin,
        body: { node: "node-1" },
      }),
      409,
      "Engine node 'node-1' is draining: it takes no new organization",
    );
    const listed = await app.request("GET", "/api/v1/organizations", { headers: admin });
    const acme = listed.body.data.find((o: { id: string }) => o.id === a.id);
    assert.is(acme.placement.node, "node-1");
    assert.is(acme.placement.standby_node, "node-2");
    const nodes = await app.request("GET", NODES, { headers: admin });
    assert.equal(
      nodes.body.data.map((n: { name: string; orgs: number; standby_orgs: number }) => [
        n.name,
        n.orgs,
        n.standby_orgs,
      ]),
      [
        ["node-1", 1, 0],
        ["node-2", 1, 1],
      ],
    );
    expectError(
      await app.request("DELETE", `${NODES}/${two.id}`, { headers: admin }),
      409,
      "Engine node 'node-2' still holds 2 organizations (primary or standby): place them elsewhere first",
    );
    // The org's own view never shows where it lives.
    const own = await app.request("GET", `/api/v1/organizations/${a.id}`, { headers: orgKey(a) });
    assert.is(own.status, 200, own.text);
    assert.not.ok("placement" in own.body);
  } finally {
    await app.close();
  }
});

test("pin: an org whose move is under way is refused with a 409 naming the move; pinned once it is done", async () => {
  const app = await startTestApp();
  try {
    await addNode(app, node("node-1", 5));
    const a = await app.createOrg("A");
    await addNode(app, node("node-2", 5, { sip_address: "10.0.0.12" }));
    await addNode(app, node("node-3", 5, { sip_address: "10.0.0.13" }));
    const admin = await adminHeaders(app);
    // No move driver runs in this app: the move stays in its first phase.
    const moved = await app.request("POST", `/api/v1/admin/organizations/${a.id}/move`, {
      headers: admin,
      body: { to: "node-2" },
    });
    assert.is(moved.status, 202, moved.text);
    const path = `/api/v1/admin/organizations/${a.id}/placement`;
    for (const body of [
      { node: "node-3" },
      { node: "node-1" },
      { node: "node-1", standby_node: "node-3" },
    ]) {
      expectError(
        await app.request("PUT", path, { headers: admin, body }),
        409,
        `Organization is being moved to engine node 'node-2' (move ${moved.body.id}, phase deploying): wait until the move is done, then pin it`,
      );
    }
    const placement = await placementOf(app, a.id);
    assert.equal(
      [placement.node, placement.standby_node, placement.pinned],
      ["node-1", null, false],
    );
    // Done (as the driver ends it): the org is pinned as asked.
    await app.db
      .updateTable("org_moves")
      .set({ phase: "done", finished_at: "2026-01-01T00:00:00.000Z" })
      .where("org_id", "=", a.id)
      .execute();
    const pinned = await app.request("PUT", path, { headers: admin, body: { node: "node-3" } });
    assert.is(pinned.status, 200, pinned.text);
    assert.is(pinned.body.node, "node-3");
  } finally {
    await app.close();
  }
});

test("tenants get 403 on every node and placement route; bad fields are 400; delete of an empty node", async () => {
  const app = await startTestApp();
  try {
    const admin = await adminHeaders(app);
    const org = await app.createOrg("A");
    const created = await addNode(app, node("node-1", 5));
    for (const [method, path] of [
      ["GET", NODES],
      ["POST", NODES],
      ["GET", `${NODES}/${created.id}`],
      ["PUT", `${NODES}/${created.id}`],
      ["POST", `${NODES}/${created.id}/drain`],
      ["DELETE", `${NODES}/${created.id}`],
      ["GET", `/api/v1/admin/organizations/${org.id}/placement`],
      ["PUT", `/api/v1/admin/organizations/${org.id}/placement`],
    ] as const) {
      const res = await app.request(method, path, {
        headers: orgKey(org),
        ...(method === "GET" ? {} : { body: {} }),
      });
      assert.is(res.status, 403, `${method} ${path}: ${res.text}`);
    }
    for (const [field, value] of [
      ["name", "Node 1"],
      ["ami_host", "10.0.0.1\r\nAction: Originate"],
      ["ami_secret", "with space"],
      ["sip_address", "10.0.0.1:5060;transport=tcp"],
      ["capacity", 0],
    ] as const) {
      const res = await app.request("POST", NODES, {
        headers: admin,
        body: node("node-x", 1, { [field]: value }),
      });
      assert.is(res.status, 400, `${field}: ${res.text}`);
      assert.ok(res.body.error.includes(field), res.text);
    }
    const second = await addNode(app, node("node-2", 5));
    const deleted = await app.request("DELETE", `${NODES}/${second.id}`, { headers: admin });
    assert.is(deleted.status, 204, deleted.text);
    expectError(
      await app.request("GET", `${NODES}/${second.id}`, { headers: admin }),
      404,
      "Engine node not found",
    );
  } finally {
    await app.close();
  }
});

test.run();
