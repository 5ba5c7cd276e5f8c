// Media that follows the org (issue 25, docs/nodes.md "Media and recordings with several nodes"):
// with no engine node, media stays in PBX_SOUNDS_DIR exactly as before (no copy, and an uploaded
// greeting deploys nothing); once nodes are defined each node's deployer copies the greetings,
// uploaded greetings and music on hold of the orgs it holds into `<nodes dir>/<name>.sounds`, in
// the org's deploy, and removes an org's copies when it leaves the node; a recording is read
// from the recordings directory of the node that carried the call. Two fake AMI engines
// (recorded answers only) stand for the nodes. A node's copies change only under its deployer
// lease, fenced like its reloads.

import { randomBytes } from "node:crypto";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { nodeRecordingsDir, nodeSoundsDir } from "../../src/deploy/node-dirs.js";
import { NodeMediaCopies } from "../../src/deploy/node-media.js";
import { purgeRecordings } from "../../src/domain/compliance/retention.js";
import { createEngineNode } from "../../src/domain/nodes/engine-nodes.js";
import { createOrganizationRecord } from "../../src/domain/orgs/org-creation.js";
import { FakeAmiServer } from "../../src/engine/testing/fake-ami.js";
import { encodeWav } from "../../src/tts/wav.js";
import { fakeSpeechEngine } from "../api/ivrs-helpers.js";
import { freshStore } from "../store/helpers.js";
import { until } from "./fake-nodes.js";
import { fakeNodeEngine, startServerWithEngines } from "./server-with-engines.js";

const PASSWORD = "node-media-password";

/** A short 8 kHz tone: what an upload stores unchanged. */
function tone(hz: number): Uint8Array {
  const pcm = new Int16Array(800);
  for (let i = 0; i < pcm.length; i++)
    pcm[i] = Math.round(8000 * Math.sin((2 * Math.PI * hz * i) / 8000));
  return encodeWav(pcm, 8000);
}

/** Every file under `dir` (dot directories included), as paths relative to it. */
function filesUnder(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { recursive: true })
    .map(String)
    .filter((path) => statSync(join(dir, path)).isFile())
    .sort();
}

/** The Cdr event of fixtures/calls/internal.json as a recorded call `id` of org `orgId`. */
function recordedCdr(orgId: string, id: string): Record<string, string> {
  const fixture = JSON.parse(
    readFileSync(new URL("../../fixtures/calls/internal.json", import.meta.url), "utf8"),
  ) as { events: Record<string, string>[] };
  const recorded = fixture.events.find((e) => e.event === "Cdr" && e.accountcode !== "")!;
  const text = JSON.stringify(recorded).split("aaaaaaaa-0000-4000-8000-000000000001").join(orgId);
  return {
    ...(JSON.parse(text) as Record<string, string>),
    uniqueid: id,
    linkedid: id,
    recordingfile: `${orgId}/${id}.wav`,
  };
}

test("media follows the org: copied to its node before its reloads, removed when it leaves", async () => {
  const running = await startServerWithEngines({ password: PASSWORD });
  const { dataDir, config, server, engineClock, admin, runtime, settle } = running;
  const request = running.request;
  const nodesDir = join(dataDir, "nodes");
  const engines = [1, 2].map(
    (n) =>
      new FakeAmiServer({
        engineDir: join(nodesDir, `node-${n}`),
        implicitIncludes: true,
        systemName: `node-${n}`,
      }),
  );
  for (const engine of engines) running.atClose(() => engine.close());
  server.pbx.deps.speechEngine = fakeSpeechEngine();
  const nodes = server.nodes!;
  const sounds = config.soundsDir;
  const node1 = nodeSoundsDir(nodesDir, "node-1");
  const node2 = nodeSoundsDir(nodesDir, "node-2");
  try {
    const ports = await Promise.all(engines.map((e) => e.listen()));

    // No node: media is written to PBX_SOUNDS_DIR and nowhere else; a greeting upload deploys
    // nothing (played by name), exactly as before.
    const a = (await request("POST", "/organizations", admin, { name: "A" })).body;
    const keyA = { "x-api-key": a.api_key };
    engineClock.advance(800);
    await server.engine!.deploys.scheduler.idle();
    assert.is((await request("POST", "/greetings?name=hello", keyA, tone(440))).status, 201);
    assert.equal(server.engine!.deploys.scheduler.pendingOrgs, [], "no deploy for a greeting");
    assert.not.ok(await server.deployRequests.requested(a.id));
    assert.is((await request("POST", "/music-on-hold?name=jazz", keyA, tone(330))).status, 201);
    engineClock.advance(800);
    await server.engine!.deploys.scheduler.idle();
    assert.ok(existsSync(join(sounds, "moh", a.id, "jazz.wav")));
    assert.equal(filesUnder(nodesDir), [], "no node, no copy");

    // Two nodes: node-1 takes A, and its start-up deploy copies A's media to node-1 only.
    await running.addNodes(ports.map((port, n) => fakeNodeEngine(port, n + 1)));
    assert.equal(filesUnder(join(node1, "custom")), [`${a.id}/hello.wav`]);
    assert.equal(filesUnder(join(node1, "moh")), [`${a.id}/jazz.wav`]);
    assert.equal(
      readFileSync(join(node1, "moh", a.id, "jazz.wav")),
      readFileSync(join(sounds, "moh", a.id, "jazz.wav")),
    );
    assert.not.ok(
      filesUnder(node2).some((path) => path.includes(a.id)),
      "node-2 has none of A",
    );
    // Another deploy of A copies nothing that did not change (the copy is the same file).
    const copied = statSync(join(node1, "moh", a.id, "jazz.wav")).ino;
    assert.is(
      (await request("POST", "/users", keyA, { extension: "100", name: "Ann" })).status,
      201,
    );
    await until(
      () => runtime("node-1").engine.deploys.scheduler.pendingOrgs.includes(a.id),
      "A scheduled",
    );
    await settle();
    assert.is(statSync(join(node1, "moh", a.id, "jazz.wav")).ino, copied);

    // B on node-2: its generated IVR greeting and its music reach node-2 with its deploy.
    const b = (await request("POST", "/organizations", admin, { name: "B" })).body;
    const keyB = { "x-api-key": b.api_key };
    const n2 = runtime("node-2");
    const ivr = await request("POST", "/ivrs", keyB, { name: "Main", extension: "500" });
    assert.is(ivr.status, 201, JSON.stringify(ivr.body));
    const generated = await request("POST", `/ivrs/${ivr.body.id}/generate-greeting`, keyB, {
      text: "Welcome to B",
    });
    assert.is(generated.status, 200, JSON.stringify(generated.body));
    assert.is((await request("POST", "/music-on-hold?name=waltz", keyB, tone(550))).status, 201);
    await until(() => n2.engine.deploys.scheduler.pendingOrgs.includes(b.id), "B scheduled");
    const greeting = `greetings/greeting_ivr_${ivr.body.id}.wav`;
    assert.not.ok(existsSync(join(node2, greeting)), "copied by the deploy, not by the save");
    await settle();
    assert.equal(
      readFileSync(join(node2, greeting)),
      readFileSync(join(sounds, greeting)),
      "node-2 plays B's greeting from its own sounds directory",
    );
    assert.ok(existsSync(join(node2, "moh", b.id, "waltz.wav")));
    assert.not.ok(
      filesUnder(node1).some((path) => path.includes(b.id)),
      "node-1 has none of B",
    );
    assert.not.ok(existsSync(join(node1, greeting)));

    // With nodes, an uploaded greeting deploys its org (the copy is the deploy's), to node-2.
    assert.is((await request("POST", "/greetings?name=late", keyB, tone(660))).status, 201);
    await until(() => n2.engine.deploys.scheduler.pendingOrgs.includes(b.id), "B scheduled");
    await settle();
    assert.ok(existsSync(join(node2, "custom", b.id, "late.wav")));
    // A regenerated greeting (same prompt, same compiled files) is copied again.
    const before = readFileSync(join(node2, greeting));
    server.pbx.deps.speechEngine = {
      name: "louder",
      async synthesize() {
        return { pcm: new Int16Array(1600).fill(3000), sampleRate: 8000 };
      },
    };
    const again = await request("POST", `/ivrs/${ivr.body.id}/generate-greeting`, keyB, {
      text: "Welcome again",
    });
    assert.is(again.status, 200, JSON.stringify(again.body));
    await until(() => n2.engine.deploys.scheduler.pendingOrgs.includes(b.id), "B scheduled");
    await settle();
    assert.not.equal(readFileSync(join(node2, greeting)), before);
    assert.equal(readFileSync(join(node2, greeting)), readFileSync(join(sounds, greeting)));
    // A deleted file leaves the node with the deploy.
    assert.is((await request("DELETE", "/music-on-hold/waltz", keyB)).status, 204);
    await until(() => n2.engine.deploys.scheduler.pendingOrgs.includes(b.id), "B scheduled");
    await settle();
    assert.not.ok(existsSync(join(node2, "moh", b.id, "waltz.wav")));

    // A pinned to node-2: its copies move with its configuration.
    const pinned = await request("PUT", `/admin/organizations/${a.id}/placement`, admin, {
      node: "node-2",
    });
    assert.is(pinned.status, 200, JSON.stringify(pinned.body));
    await nodes.refresh();
    await settle();
    assert.equal(filesUnder(node1), [], "node-1 keeps nothing of A, its manifest included");
    assert.ok(existsSync(join(node2, "moh", a.id, "jazz.wav")));
    assert.ok(existsSync(join(node2, "custom", a.id, "hello.wav")));
    // node-1 made A's warm standby: it holds A's media as it holds A's configuration; cleared,
    // they leave again.
    for (const standby of ["node-1", null]) {
      const set = await request("PUT", `/admin/organizations/${a.id}/placement`, admin, {
        node: "node-2",
        standby_node: standby,
      });
      assert.is(set.status, 200, JSON.stringify(set.body));
      await nodes.refresh();
      await settle();
      assert.is(existsSync(join(node1, "moh", a.id, "jazz.wav")), standby !== null);
      assert.is(existsSync(join(node1, "custom", a.id, "hello.wav")), standby !== null);
    }
    assert.equal(filesUnder(node1), []);

    // B's recorded call on node-2 is read from node-2's recordings; A's from before any node
    // (no node on its record) from PBX_RECORDINGS_DIR.
    const recording = tone(220);
    const node2Recordings = nodeRecordingsDir(nodesDir, "node-2");
    mkdirSync(join(node2Recordings, b.id), { recursive: true });
    writeFileSync(join(node2Recordings, b.id, "node-2-1800000000.7.wav"), recording);
    await until(() => engines[1]!.logins >= 2, "node-2's events connection");
    engines[1]!.emitEvent(recordedCdr(b.id, "node-2-1800000000.7"));
    const download = async () => request("GET", "/calls/node-2-1800000000.7/recording", keyB);
    await until(async () => (await download()).status === 200, "B's recording downloadable");
    assert.equal((await download()).bytes, recording);
    assert.is(
      (await request("GET", "/calls/node-2-1800000000.7/recording", keyA)).status,
      404,
      "another org's recording is not found",
    );
    const purged = await purgeRecordings(
      { db: server.pbx.deps.db, recordingsDir: config.recordingsDir, nodesDir },
      b.id,
      new Date(Date.now() + 60_000),
      true,
    );
    assert.is(purged, 1, "retention purges the nodes' recordings too");
  } finally {
    await running.close();
  }
});

test("a node's copies: a manifest never names a path outside the media folders", async () => {
  const dir = mkdtempSync(join(tmpdir(), "pbx-node-media-unit-"));
  const store = await freshStore();
  try {
    const orgId = "0b9a3c1e-1111-4111-8111-000000000001";
    const copies = new NodeMediaCopies({
      db: store.db,
      nodeId: "no-such-node",
      sourceDir: join(dir, "sounds"),
      nodeDir: join(dir, "node.sounds"),
    });
    // An org not placed on the node wants nothing; a forged manifest entry is never acted on.
    const manifests = join(dir, "node.sounds", ".pbxctl", "media");
    mkdirSync(manifests, { recursive: true });
    writeFileSync(join(dir, "outside.wav"), "keep");
    writeFileSync(
      join(manifests, `${orgId}.json`),
      JSON.stringify({ "../outside.wav": { size: 4, mtimeMs: 1 } }),
    );
    assert.equal(await copies.syncOrg(orgId), { copied: [], removed: [] });
    assert.equal(await copies.pruneExcept(new Set()), { copied: [], removed: [] });
    assert.ok(existsSync(join(dir, "outside.wav")), "never removed");
    let refused: unknown = null;
    await copies.syncOrg("../etc").catch((error: unknown) => {
      refused = error;
    });
    assert.match(String(refused), /not an org id/);
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test("a node's copies are fenced by its deployer lease: refused before, failed when lost during", async () => {
  const dir = mkdtempSync(join(tmpdir(), "pbx-node-media-fence-"));
  const store = await freshStore();
  try {
    const serverKey = randomBytes(32);
    const now = "2026-03-01T10:00:00.000Z";
    const deps = { db: store.db, config: { serverKey }, clock: () => new Date(now) };
    const node = await createEngineNode(deps, {
      name: "node-1",
      ami_username: "pbxctl",
      ami_secret: "secret",
      sip_address: "10.0.0.11",
      capacity: 5,
    });
    const org = await createOrganizationRecord(
      store.db,
      { name: "A", slug: null, status: "active" },
      { serverKey, now },
    );
    const orgId = org.row.id;
    const source = join(dir, "sounds");
    const nodeDir = join(dir, "node-1.sounds");
    mkdirSync(join(source, "moh", orgId), { recursive: true });
    writeFileSync(join(source, "moh", orgId, "jazz.wav"), tone(440));
    const copied = join(nodeDir, "moh", orgId, "jazz.wav");
    // The fence as the node runtime's: the lease, as this test says it is held or lost.
    let lease: "held" | "lost" | "lost during" = "lost";
    const checks: string[] = [];
    const copies = new NodeMediaCopies({
      db: store.db,
      nodeId: node.id,
      sourceDir: source,
      nodeDir,
      fence: async () => {
        checks.push(lease);
        if (lease === "lost") throw new Error("deployer:node lease lost");
        if (lease === "lost during") lease = "lost";
      },
    });
    const failure = (run: Promise<unknown>) =>
      run.then(
        () => "no error",
        (error: Error) => error.message,
      );

    // Lost before: nothing is copied, and the deploy fails.
    assert.is(await failure(copies.syncOrg(orgId)), "deployer:node lease lost");
    assert.equal(filesUnder(nodeDir), []);

    // Held: copied, with its manifest.
    lease = "held";
    assert.equal(await copies.syncOrg(orgId), { copied: [`moh/${orgId}/jazz.wav`], removed: [] });
    assert.ok(existsSync(copied));

    // The org's music is deleted; a stale holder (lease lost) removes nothing of the node's.
    rmSync(join(source, "moh", orgId, "jazz.wav"));
    lease = "lost";
    assert.is(await failure(copies.syncOrg(orgId)), "deployer:node lease lost");
    assert.is(await failure(copies.pruneExcept(new Set())), "deployer:node lease lost");
    assert.ok(existsSync(copied), "never removed by a deployer without the lease");

    // Lost while the removal ran: reported failed, so the deploy is not recorded as applied.
    lease = "lost during";
    assert.is(
      await failure(copies.syncOrg(orgId)),
      `the removal of moh/${orgId}/jazz.wav ran after the deployer lease was lost (deployer:node lease lost); left for the new deployer`,
    );
    assert.ok(checks.length >= 6, "checked before and after each change");
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test.run();
