// The `org move` driver's steps against fake engines (the server-level sequence with fake AMI
// engines is test/deploy/org-move.test.ts): with an edge, the phones are told to re-register
// only once the edge took the placement switch, from the source node, each registered phone
// of the org once; a failed step is recorded and retried; the sides are deployed in order
// (target before the switch, source after the drain).
import { test } from "uvu";
import * as assert from "uvu/assert";
import { createEngineNode } from "../../src/domain/nodes/engine-nodes.js";
import { type MoveEngines, OrgMoveDriver } from "../../src/domain/nodes/org-move-driver.js";
import { getOrgMove, moveOrg } from "../../src/domain/nodes/org-moves.js";
import { AmiConnection } from "../../src/engine/ami-connection.js";
import { CHECK_SYNC, notifyCheckSync } from "../../src/engine/endpoint-notify.js";
import { FakeAmiServer } from "../../src/engine/testing/fake-ami.js";
import { createEdgeSyncRepository } from "../../src/store/edge-sync-repository.js";
import { findPlacement } from "../../src/store/engine-node-repository.js";
import { addSipContact } from "../../src/store/sip-contact-repository.js";
import { startTestApp } from "../api/helpers.js";
import { FakeClock } from "../deploy/helpers.js";

const T0 = Date.parse("2026-03-01T10:00:00.000Z");

test("with an edge: phones told to re-register from the source once the edge switched; a failed step is retried", async () => {
  const app = await startTestApp();
  const timers = new FakeClock();
  const clock = () => new Date(T0 + timers.now());
  try {
    const deps = { db: app.db, config: app.config, clock };
    const n1 = await createEngineNode(deps, {
      name: "node-1",
      ami_username: "pbxctl",
      ami_secret: "secret",
      sip_address: "10.0.0.11",
      capacity: 5,
    });
    const n2 = await createEngineNode(deps, {
      name: "node-2",
      ami_username: "pbxctl",
      ami_secret: "secret",
      sip_address: "10.0.0.12",
      capacity: 5,
    });
    const org = await app.createOrg("A");
    const other = await app.createOrg("B");
    const now = clock().toISOString();
    for (const aor of ["org_a_100", "org_a_101"]) {
      await addSipContact(app.db, { orgId: org.id, aor, uri: `sip:${aor}@10.1.1.1:5060`, now });
    }
    await addSipContact(app.db, { orgId: other.id, aor: "org_b_100", uri: "sip:b@10.1.1.2", now });
    // Whatever the edge owed before is applied: the move's switch is what it waits for.
    const edgeRequests = createEdgeSyncRepository(app.db);
    await edgeRequests.done(await edgeRequests.pending());

    const log: string[] = [];
    let failDeploys = 1;
    const engines: MoveEngines = {
      edge: true,
      async deployOn(nodeId, orgId) {
        const side = nodeId === n2.id ? "target" : "source";
        if (failDeploys-- > 0) throw new Error(`engine of ${side} refused the reload`);
        const placed = (await findPlacement(app.db, orgId))?.node_id === n2.id;
        log.push(`deploy ${side} (placed on target: ${placed})`);
        return true;
      },
      callsOn: () => 0,
      async notifyReregister(nodeId, endpoints) {
        log.push(`notify from ${nodeId === n1.id ? "source" : "target"}: ${endpoints.join(",")}`);
        return endpoints.length;
      },
    };
    const driver = new OrgMoveDriver({
      db: app.db,
      clock,
      timers,
      engines,
      pollMs: 1000,
      retryMs: 5000,
    });
    const move = await moveOrg(deps, org.id, { to: "node-2" });
    driver.start();
    const state = () => getOrgMove(deps, org.id);
    /** Runs the driver's waits (fake timers) until the move's state satisfies `done`. */
    const until = async (done: (m: Awaited<ReturnType<typeof state>>) => boolean, what: string) => {
      for (let i = 0; i < 300; i++) {
        const move = await state();
        if (done(move)) return move;
        timers.advance(1000);
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      throw new Error(`never: ${what}`);
    };
    const failed = await until((m) => m.last_error !== null, "the failed step recorded");
    assert.is(failed.phase, "deploying");
    assert.is(failed.last_error, "engine of target refused the reload");
    const waiting = await until((m) => m.phase === "re-registering", "switched");
    assert.is(waiting.last_error, null, "cleared once the step went through");
    assert.equal(
      log,
      ["deploy target (placed on target: false)"],
      "target deployed before the switch",
    );
    // The edge has not taken the switch: nobody is told anything yet, however long it takes.
    for (let i = 0; i < 5; i++) {
      timers.advance(1000);
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    assert.is((await state()).phase, "re-registering");
    assert.is(log.length, 1);
    await edgeRequests.done(await edgeRequests.pending());
    const done = await until((m) => m.phase === "done", "done");
    assert.is(done.id, move.id);
    assert.is(done.phones_notified, 2);
    assert.equal(log, [
      "deploy target (placed on target: false)",
      "notify from source: org_a_100,org_a_101",
      "deploy source (placed on target: true)",
    ]);
    await driver.stop();
  } finally {
    await app.close();
  }
});

test("PJSIPNotify as Asterisk 22 answers it: sent to a registered endpoint, refused for an unknown one", async () => {
  const fake = new FakeAmiServer();
  const port = await fake.listen();
  const ami = new AmiConnection({ host: "127.0.0.1", port, username: "pbxctl", secret: "secret" });
  try {
    ami.start();
    fake.registeredEndpoints.add("org_a_100");
    assert.is(await notifyCheckSync(ami, "org_a_100"), true);
    assert.is(await notifyCheckSync(ami, "org_a_999"), false, "no such endpoint");
    assert.is(await notifyCheckSync(ami, "bad\r\nAction: Originate"), false, "never sent");
    assert.equal(fake.notified, ["org_a_100"]);
    const sent = fake.received.filter((a) => a.action === "PJSIPNotify");
    assert.is(sent.length, 2);
    assert.is(sent[0]!.fields.Variable, CHECK_SYNC);
  } finally {
    await ami.close();
    await fake.close();
  }
});

test.run();
