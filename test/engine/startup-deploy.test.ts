// `pbxctl serve` starting over a store of 150 orgs of the bench's size (50 users, 5 queues,
// 5 IVRs, 20 DIDs each, bench/synthetic-org.ts) deploys them all into a real Asterisk 22 in one
// start-up deploy. Before the queue reload was bounded, the coalesced `queue reload all <750
// names>` line was refused by AMI ("Failed to parse message: line too long") from about 100 orgs.
// The orgs come in two batches (100 a batch) and are reloaded once for both; the queues are loaded
// by loading app_queue afresh (src/deploy/first-queue-load.ts), so app_queue's device-state
// subscription never sees the ~4,500 events the queues and members publish.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pino } from "pino";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { syntheticOrg } from "../../bench/synthetic-org.js";
import { type RunningServer, startServer } from "../../src/api/server.js";
import { loadConfig } from "../../src/config.js";
import { applyOrgState } from "../../src/domain/config/apply.js";
import { AMI_MAX_LINE_BYTES } from "../../src/engine/ami-connection.js";
import { createAmiTarget } from "../../src/engine/ami-target.js";
import type { EngineTarget } from "../../src/engine/target.js";
import { openStore } from "../../src/store/database.js";
import { boot } from "./helpers.js";
import { serveEnv } from "./service.js";

const ORGS = 150;

test(`a start-up deploy of ${ORGS} bench-sized orgs loads every org's queues`, async () => {
  const engine = await boot([]);
  const dataDir = await mkdtemp(join(tmpdir(), "pbxctl-startup-deploy-"));
  let server: RunningServer | null = null;
  const inner = createAmiTarget({
    host: "127.0.0.1",
    port: engine.amiPort,
    username: engine.amiUsername,
    secret: engine.amiSecret,
  });
  const sent: string[] = [];
  const target: EngineTarget = {
    ...inner,
    reload(request) {
      sent.push(request.command.command);
      return inner.reload(request);
    },
  };
  try {
    const env = serveEnv(engine);
    const config = loadConfig(env, { dataDir, port: 0, host: "127.0.0.1" });
    const db = await openStore(config.dbFile);
    for (let i = 0; i < ORGS; i++) {
      const org = syntheticOrg(i);
      // No carrier to register with here; registrations would only log their retries.
      org.trunks = org.trunks.map((trunk) => ({ ...trunk, registration: false }));
      await applyOrgState(db, org, { serverKey: config.serverKey });
    }
    server = await startServer({
      config,
      db,
      env,
      logger: pino({ level: "silent" }),
      engineOptions: { target },
    });
    const summary = await server.ready;
    assert.ok(summary, "the start-up deploy ran");
    assert.equal(summary.failed, [], JSON.stringify(summary.failed.slice(0, 2)));
    assert.ok(
      sent.every((command) => Buffer.byteLength(`Command: ${command}`) <= AMI_MAX_LINE_BYTES),
      `every reload fits an AMI line: ${sent.map((c) => c.length).join(", ")}`,
    );
    assert.not.match(engine.log(), "Line too long");
    assert.equal(
      [...sent].sort(),
      [
        "dialplan reload",
        "module refresh app_queue.so",
        "module reload app_voicemail.so",
        "module reload res_musiconhold.so",
        "module reload res_pjsip.so",
      ],
      `one reload of each module for both batches: ${sent.join(", ")}`,
    );
    for (const index of [0, ORGS / 2, ORGS - 1]) {
      const org = syntheticOrg(index);
      for (const queue of org.queues) {
        const name = `${org.org.context_prefix}q${queue.number}`;
        assert.not.match(await engine.cli(`queue show ${name}`), "No such queue", name);
      }
    }
  } finally {
    if (server) await server.close();
    else await inner.close();
    await engine.stop();
    await rm(dataDir, { recursive: true, force: true });
  }
});

test.run();
