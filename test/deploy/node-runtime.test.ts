// Per-node deploys in `serve` (issue 25 step 3): a server with no engine node deploys exactly as
// before (the implicit engine's `deployer:files` role, `<data-dir>/asterisk`); once nodes are
// added it gives that role up and runs one deployer per node, each with its own lease, its own
// directory (`<data-dir>/nodes/<name>`) and its own reload queue on its own engine. Two fake AMI
// engines (recorded answers only) stand for the nodes, reached through each node's row (its AMI
// port and sealed secret). A save to an org reloads its node only; a pin moves the org's files
// from one node's directory to the other's at run time.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { sql } from "kysely";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { nodeIngestRole } from "../../src/api/node-call-tracking.js";
import Status, { type StatusCommandResult } from "../../src/cli/commands/status.js";
import { nodeDeployerRole } from "../../src/deploy/node-runtime.js";
import { ORG_MOVES_ROLE } from "../../src/domain/nodes/org-move-driver.js";
import { FakeAmiServer } from "../../src/engine/testing/fake-ami.js";
import { createLeaseRepository } from "../../src/store/lease-repository.js";
import { runCommand } from "../cli/run-command.js";
import { holds, until } from "./fake-nodes.js";
import { fakeNodeEngine, startServerWithEngines, T0 } from "./server-with-engines.js";

const PASSWORD = "node-runtime-password";

/** The recorded Cdr event of fixtures/calls/internal.json, as of org `orgId`. */
function cdrEvent(orgId: string, n: number): Record<string, string> {
  const fixture = JSON.parse(
    readFileSync(new URL("../../fixtures/calls/internal.json", import.meta.url), "utf8"),
  ) as { events: Record<string, string>[] };
  const recorded = fixture.events.find((e) => e.event === "Cdr" && e.accountcode !== "")!;
  const text = JSON.stringify(recorded).split("aaaaaaaa-0000-4000-8000-000000000001").join(orgId);
  const id = `1800000000.${n}`;
  return { ...(JSON.parse(text) as Record<string, string>), uniqueid: id, linkedid: id };
}

test("no node: the implicit engine; nodes: one deployer, lease and reload queue per node", async () => {
  const running = await startServerWithEngines({ password: PASSWORD });
  const { dataDir, store, server, engineClock, leaseTimers, admin, runtime, settle } = running;
  const call = running.request;
  const nodes = server.nodes!;
  const engines = [1, 2].map(
    (n) =>
      new FakeAmiServer({
        engineDir: join(dataDir, "nodes", `node-${n}`),
        implicitIncludes: true,
        systemName: `node-${n}`,
      }),
  );
  for (const engine of engines) running.atClose(() => engine.close());
  try {
    const ports = await Promise.all(engines.map((e) => e.listen()));

    // No node: exactly as before (one implicit engine, its directory, its deployer role).
    assert.not.ok(nodes.nodesDefined);
    assert.equal(server.roles.held(), ["deployer:files", "ticket-poller", "retention"]);
    const a = (await call("POST", "/organizations", admin, { name: "A" })).body;
    const keyA = { "x-api-key": a.api_key };
    assert.is((await call("POST", "/users", keyA, { extension: "100", name: "Ann" })).status, 201);
    engineClock.advance(800);
    await server.engine!.deploys.scheduler.idle();
    assert.ok(holds(join(dataDir, "asterisk"), `[${a.context_prefix}100]`), "implicit engine");

    // Two nodes (node-1 takes A, the org that exists), each reached through its own row.
    await running.addNodes(ports.map((port, n) => fakeNodeEngine(port, n + 1)));
    assert.ok(nodes.nodesDefined);
    const n1 = runtime("node-1");
    const n2 = runtime("node-2");
    assert.equal(
      server.roles.held().sort(),
      [
        nodeDeployerRole(n1.node.id),
        nodeDeployerRole(n2.node.id),
        nodeIngestRole(n1.node.id),
        nodeIngestRole(n2.node.id),
        ORG_MOVES_ROLE,
        "retention",
        "ticket-poller",
      ].sort(),
      "the implicit engine's deployer role is given up; org moves are driven under their lease",
    );
    // One lease per node, each in the store under its own name (the fence of its reloads).
    const leases = createLeaseRepository(server.pbx.deps.db);
    for (const r of [n1, n2]) {
      assert.ok(await leases.holds(r.role, "a", 1, new Date(T0 + leaseTimers.now())), r.role);
    }
    // `/health` answers anyone: the kinds of the roles this replica holds, never a node's id or
    // an AMI address; admins read the leases behind them, with the node's name.
    const health = (await (await fetch(`${server.url}/health`)).json()) as { roles: string[] };
    assert.equal([...health.roles].sort(), [
      "call-ingest",
      "deployer",
      "org-moves",
      "retention",
      "ticket-poller",
    ]);
    for (const id of [n1.node.id, n2.node.id]) {
      assert.not.ok(JSON.stringify(health).includes(id), "/health names no node");
    }
    assert.is((await call("GET", "/admin/replica-roles", keyA)).status, 403);
    const holders = await call("GET", "/admin/replica-roles", admin);
    assert.is(holders.status, 200, JSON.stringify(holders.body));
    const holderOf = (lease: string) =>
      (holders.body.data as { lease: string; engine: string | null }[]).find(
        (row) => row.lease === lease,
      );
    // (`held` is left out: the leases run on this test's clock, the API on the real one;
    // test/domain/role-holders.test.ts drives it.)
    const seen = (lease: string) => {
      const { acquired_at, expires_at, held, ...rest } = holderOf(lease) as Record<string, unknown>;
      return rest;
    };
    assert.equal(seen(n1.role), {
      lease: n1.role,
      role: "deployer",
      engine: "node-1",
      holder: "a",
    });
    assert.equal(seen(nodeIngestRole(n2.node.id)), {
      lease: nodeIngestRole(n2.node.id),
      role: "call-ingest",
      engine: "node-2",
      holder: "a",
    });
    assert.equal(seen("retention"), {
      lease: "retention",
      role: "retention",
      engine: null,
      holder: "a",
    });
    assert.is(holderOf("deployer:files")?.engine, "files", "the implicit engine's, given up");
    await nodes.started();
    const dir1 = join(dataDir, "nodes", "node-1");
    const dir2 = join(dataDir, "nodes", "node-2");
    assert.ok(holds(dir1, `[${a.context_prefix}100]`), "node-1's start-up deploy wrote A");
    assert.not.ok(holds(dir2, a.id), "node-2 holds nothing of A");
    assert.ok(engines[0]!.reloadCommands().length > 0, "node-1's engine loaded it");

    // B goes to node-2 (node-1 holds more); its saves deploy there only.
    const b = (await call("POST", "/organizations", admin, { name: "B" })).body;
    const keyB = { "x-api-key": b.api_key };
    assert.is((await call("POST", "/users", keyB, { extension: "200", name: "Bo" })).status, 201);
    await until(() => n2.engine.deploys.scheduler.pendingOrgs.includes(b.id), "B scheduled");
    await settle();
    assert.ok(holds(dir2, `[${b.context_prefix}200]`));
    assert.not.ok(holds(dir1, b.id), "node-1 never sees B");

    // A save to A reloads node 1 and nothing on node 2.
    const reloads1 = engines[0]!.reloadCommands().length;
    const reloads2 = engines[1]!.reloadCommands().length;
    assert.is((await call("POST", "/users", keyA, { extension: "101", name: "Al" })).status, 201);
    await until(() => n1.engine.deploys.scheduler.pendingOrgs.includes(a.id), "A scheduled");
    assert.not.ok(n2.engine.deploys.scheduler.pendingOrgs.includes(a.id), "never on node-2");
    await settle();
    assert.ok(holds(dir1, `[${a.context_prefix}101]`));
    assert.ok(engines[0]!.reloadCommands().length > reloads1, "node-1 reloaded");
    assert.is(engines[1]!.reloadCommands().length, reloads2, "node-2 did not");
    assert.is(engines[0]!.overlaps + engines[1]!.overlaps, 0, "one reload at a time per node");
    assert.not.ok(await server.deployRequests.requested(a.id), "node-1 closed A's request");
    // Each deploy record says which engine it went to ('' for the implicit engine).
    const recorded = await sql<{ node_id: string; n: number }>`
      select node_id, count(*) as n from deploy_records group by node_id order by node_id`.execute(
      server.pbx.deps.db,
    );
    assert.equal(
      recorded.rows.map((row) => row.node_id).sort(),
      ["", n1.node.id, n2.node.id].sort(),
    );

    // On-request deploys and the status go to the org's node.
    const deployed = await call("POST", "/config/deploy", keyB);
    assert.is(deployed.status, 200, JSON.stringify(deployed.body));
    assert.is(deployed.body.org_id, b.id);
    const live = await call("GET", "/config/status", keyA);
    assert.is(live.body.live, true, JSON.stringify(live.body));
    assert.not.ok("node" in live.body, "an org is never told its node");

    // `pbxctl status` groups the units by node, each from its own deploy log: all live.
    const saved = process.env.PBX_DATABASE_URL;
    if (store.location.kind === "postgres") process.env.PBX_DATABASE_URL = store.location.url;
    const status = await runCommand(Status, ["--data-dir", dataDir, "--json"]).finally(() => {
      if (saved === undefined) delete process.env.PBX_DATABASE_URL;
      else process.env.PBX_DATABASE_URL = saved;
    });
    assert.is(status.code, 0, status.stdout + status.stderr + String(status.error));
    const units = (status.result as StatusCommandResult).units.map(
      (u) => `${u.node} ${u.unit}${u.pending ? " pending" : ""}`,
    );
    assert.equal(
      units.sort(),
      [
        `node-1 org:${a.context_prefix}`,
        "node-1 gateway",
        "node-1 top",
        `node-2 org:${b.context_prefix}`,
        "node-2 gateway",
        "node-2 top",
      ].sort(),
    );

    // Events from every node: B's call on node-2 is stored by node-2's consumer and says so;
    // the org's own view never names the node.
    await until(() => engines[1]!.logins >= 2, "node-2's events connection");
    engines[1]!.emitEvent(cdrEvent(b.id, 1));
    const db = server.pbx.deps.db;
    await until(
      async () =>
        (await db.selectFrom("calls").select("org_id").where("org_id", "=", b.id).execute())
          .length > 0,
      "B's call stored",
    );
    const records = await db
      .selectFrom("call_records")
      .select("node_id")
      .where("org_id", "=", b.id)
      .execute();
    assert.equal(
      records.map((r) => r.node_id),
      [n2.node.id],
    );
    const calls = await db
      .selectFrom("calls")
      .select("node_id")
      .where("org_id", "=", b.id)
      .execute();
    assert.equal(
      calls.map((r) => r.node_id),
      [n2.node.id],
    );
    const history = await call("GET", "/calls/history", keyB);
    assert.is(history.body.total, 1, JSON.stringify(history.body));
    assert.not.ok("node_id" in history.body.calls[0], "tenants never see the node");

    // Pinned to node-2 at run time: node-1 removes A, node-2 adds it, at the next look.
    const pinned = await call("PUT", `/admin/organizations/${a.id}/placement`, admin, {
      node: "node-2",
    });
    assert.is(pinned.status, 200, JSON.stringify(pinned.body));
    await nodes.refresh();
    await settle();
    assert.not.ok(holds(dir1, a.id), "node-1 no longer holds A");
    assert.ok(holds(dir2, `[${a.context_prefix}101]`), "node-2 holds A");
    assert.ok(holds(dir2, b.id), "and still B");
    // The implicit engine's directory is no longer deployed to: A's user 101 never went there.
    assert.not.ok(holds(join(dataDir, "asterisk"), `[${a.context_prefix}101]`));

    // A node put down is left alone (its runtime and leases stop): an on-request deploy of an
    // org placed there is a 503 that does not name the node.
    assert.is(
      (await call("PUT", `/admin/organizations/${a.id}/placement`, admin, { node: "node-1" }))
        .status,
      200,
    );
    assert.is(
      (await call("PUT", `/admin/engine-nodes/${n1.node.id}`, admin, { state: "down" })).status,
      200,
    );
    await nodes.refresh();
    assert.equal(
      nodes.list().map((r) => r.node.name),
      ["node-2"],
    );
    assert.not.ok(server.roles.held().includes(nodeDeployerRole(n1.node.id)));
    assert.not.ok(server.roles.held().includes(nodeIngestRole(n1.node.id)));
    const refused = await call("POST", "/config/deploy", keyA);
    assert.is(refused.status, 503, JSON.stringify(refused.body));
    assert.equal(refused.body, {
      error: "The engine this organization runs on is down; deploys resume when it is back",
    });

    // `/health` answers anyone: it counts the nodes whose AMI is down and never names them.
    const engineHealth = async () =>
      ((await (await fetch(`${server.url}/health`)).json()) as { engine: string }).engine;
    assert.is(await engineHealth(), "connected");
    engines[1]!.dropConnections();
    await until(async () => (await engineHealth()) !== "connected", "node-2 seen disconnected");
    assert.is(await engineHealth(), "disconnected: 1 of 1 nodes");
  } finally {
    await running.close();
  }
});

test.run();
