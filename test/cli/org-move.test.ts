// `pbxctl org move ORG --to NODE`: records the move in the store of --data-dir (carried out by
// `serve`, here a driver over fake engines), prints it, waits and prints each phase (or returns
// at once with --no-wait); refusals and a bad --call-drain-timeout are one precise line, and so is
// `nodes pin` of an org being moved; with no serve holding the org-moves lease, the wait says so
// and exits 3.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import NodesPin from "../../src/cli/commands/nodes/pin.js";
import OrgMove from "../../src/cli/commands/org/move.js";
import { systemTimers } from "../../src/clock.js";
import { openDataStore } from "../../src/domain/config/gitops.js";
import { ORG_MOVES_ROLE, OrgMoveDriver } from "../../src/domain/nodes/org-move-driver.js";
import type { OrgMoveView } from "../../src/domain/nodes/org-moves.js";
import { createLeaseRepository } from "../../src/store/lease-repository.js";
import { insertOrg } from "../store/helpers.js";
import { addEngineNode } from "./engine-nodes.js";
import { runCommand } from "./run-command.js";
import { storePerTest } from "./test-store.js";

const A = "aaaaaaaa-3333-4000-8000-00000000000a";
const B = "bbbbbbbb-3333-4000-8000-00000000000b";

storePerTest(test);

test("org move: --no-wait prints the move; waiting prints every phase to done", async () => {
  const dataDir = mkdtempSync(join(tmpdir(), "pbx-org-move-"));
  const seed = await openDataStore(process.env, dataDir, { create: true });
  await insertOrg(seed.db, A, "A");
  await insertOrg(seed.db, B, "B");
  await seed.db.destroy();
  for (const name of ["node-1", "node-2"]) await addEngineNode(dataDir, name, "10.0.0.1", 5);
  const move = (...args: string[]) => runCommand(OrgMove, [...args, "--data-dir", dataDir]);

  const badTimeout = await move(A, "--to", "node-2", "--call-drain-timeout", "soon");
  assert.is(badTimeout.code, 1);
  assert.is(
    badTimeout.error?.message,
    "invalid --call-drain-timeout: soon (need a duration like 90s, 15m or 2h, at most 24h)",
  );
  const unknown = await move(A, "--to", "node-9", "--no-wait");
  assert.is(unknown.error?.message, "Engine node not found");
  const same = await move(A, "--to", "node-1", "--no-wait");
  assert.is(same.error?.message, "Organization is already on engine node 'node-1'");

  const started = await move(A, "--to", "node-2", "--call-drain-timeout", "15m", "--no-wait");
  assert.is(started.code, 0, started.stderr + String(started.error));
  assert.match(started.stdout, /moving from node-1 to node-2 \(move [0-9a-f-]{36}\)/);
  assert.match(started.stdout, /^deploying\s+on node-2, verified$/m);
  const json = await move(B, "--to", "node-2", "--no-wait", "--json");
  assert.is(json.code, 0, json.stderr + String(json.error));
  const view = json.result as OrgMoveView;
  assert.equal([view.phase, view.call_drain_timeout_seconds], ["deploying", 3600]);
  const twice = await move(A, "--to", "node-2", "--no-wait");
  assert.is(twice.error?.message, "Organization is already being moved to engine node 'node-2'");
  // A pin meanwhile would fight the move's switch: refused in one line, naming the move.
  const moveId = /\(move ([0-9a-f-]{36})\)/.exec(started.stdout)?.[1];
  const pin = (node: string) => runCommand(NodesPin, [A, node, "--data-dir", dataDir]);
  const pinned = await pin("node-1");
  assert.is(pinned.code, 1);
  assert.is(
    pinned.error?.message,
    `Organization is being moved to engine node 'node-2' (move ${moveId}, phase deploying): wait until the move is done, then pin it`,
  );

  // `serve`'s part, over engines that deploy at once and carry no call: the waiting command
  // prints each phase as the store shows it, to done.
  const store = await openDataStore(process.env, dataDir, { create: false });
  const driver = new OrgMoveDriver({
    db: store.db,
    clock: () => new Date(),
    pollMs: 5,
    engines: {
      edge: false,
      deployOn: async () => true,
      callsOn: () => 0,
      notifyReregister: async () => 0,
    },
  });
  try {
    // As serve runs it: under the org-moves lease, which the waiting command looks for.
    await createLeaseRepository(store.db).acquire(ORG_MOVES_ROLE, "serve-1", new Date(), 600_000);
    driver.start();
    for (let i = 0; i < 200; i++) {
      const row = await store.db
        .selectFrom("org_moves")
        .select("finished_at")
        .where("org_id", "=", A)
        .executeTakeFirstOrThrow();
      if (row.finished_at !== null) break;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    // Done: the org is pinned again as asked.
    const pinnedAfter = await pin("node-2");
    assert.is(pinnedAfter.code, 0, pinnedAfter.stderr + String(pinnedAfter.error));
    const back = await move(A, "--to", "node-1");
    assert.is(back.code, 0, back.stderr + String(back.error));
    const phases = back.stdout
      .split("\n")
      .slice(1)
      .filter((line) => line !== "")
      .map((line) => line.split(/\s+/)[0]);
    assert.is(phases[0], "deploying");
    assert.is(phases.at(-1), "done", back.stdout);
    assert.equal(
      phases.filter((p, i) => phases.indexOf(p) === i),
      phases,
      "each phase printed once",
    );
  } finally {
    await driver.stop();
    await store.db.destroy();
  }
});

test("org move: waiting with no serve carrying out moves says so and exits 3; the move stays", async () => {
  const dataDir = mkdtempSync(join(tmpdir(), "pbx-org-move-"));
  const seed = await openDataStore(process.env, dataDir, { create: true });
  await insertOrg(seed.db, A, "A");
  await seed.db.destroy();
  for (const name of ["node-1", "node-2"]) await addEngineNode(dataDir, name, "10.0.0.1", 5);
  // Timers whose waits end at once, their time jumping ahead: the wait's 5 s without sleeping
  // (the lease's expiry is wall time: there is no lease here at all).
  let now = 0;
  OrgMove.timers = {
    now: () => now,
    setTimer(ms, callback) {
      now += ms;
      setImmediate(callback);
      return { cancel() {} };
    },
  };
  try {
    const waited = await runCommand(OrgMove, [A, "--to", "node-2", "--data-dir", dataDir]);
    assert.is(waited.code, 3, waited.stderr);
    assert.is(
      waited.error?.message,
      "No pbxctl serve is carrying out org moves: nobody has held the org-moves lease for 5 s (no replica ever held it); the move to node-2 stays recorded (deploying) and goes on once a pbxctl serve with engine nodes runs",
    );
    assert.match(waited.stdout, /^deploying\s+on node-2, verified$/m);
    assert.ok(now >= 5000 && now <= 6000, `gave up after ${now} ms of waiting`);
    const again = await runCommand(OrgMove, [
      A,
      "--to",
      "node-2",
      "--no-wait",
      "--data-dir",
      dataDir,
    ]);
    assert.is(again.error?.message, "Organization is already being moved to engine node 'node-2'");
  } finally {
    OrgMove.timers = systemTimers;
  }
});

test.run();
