// Realtime PJSIP on two engine nodes (issue 25, docs/nodes.md "Realtime PJSIP with several
// nodes"): two real Asterisk 22 processes, SIP on 127.0.0.11 and 127.0.0.12, each set up by
// `engine init --pjsip realtime --node <name>` on one PostgreSQL 15 store migrated by pbxctl.
// Each reads the rows of its own orgs only, through its node's views: org A (placed on node-1)
// registers on node-1 and is refused on node-2, org B the reverse. After A is moved to node-2,
// node-1 still serves A from its memory cache until its deployer's expiry (what
// `RealtimePjsip.placementChanged` sends on a placement change), then refuses it, while node-2
// serves A.
import { randomBytes } from "node:crypto";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { compileOrgPjsipRealtime } from "../../src/compiler/index.js";
import { gatewayOptionsFrom } from "../../src/config.js";
import { RealtimePjsip } from "../../src/deploy/realtime-pjsip.js";
import { ReloadQueue } from "../../src/deploy/reload-queue.js";
import { StoreBuilds } from "../../src/deploy/store-builds.js";
import { createEngineNode } from "../../src/domain/nodes/engine-nodes.js";
import { pinOrg } from "../../src/domain/nodes/placement.js";
import { createOrganizationRecord } from "../../src/domain/orgs/org-creation.js";
import { createAmiTarget } from "../../src/engine/ami-target.js";
import type { AsteriskInstance } from "../../src/engine/testing/asterisk-instance.js";
import { loadOrgSources } from "../../src/model/files.js";
import { sipDigest } from "../../src/model/secrets.js";
import { type Db, openStore } from "../../src/store/database.js";
import { findEngineNodeByName } from "../../src/store/engine-node-repository.js";
import { createPjsipRealtimeRepository } from "../../src/store/pjsip-realtime-repository.js";
import { registrationOutcome } from "./baresip.js";
import { boot } from "./helpers.js";
import { type Postgres, startPostgres } from "./postgres.js";

const serverKey = randomBytes(32);
const clock = () => new Date();
const PASSWORD = "pw-101";

interface Org {
  id: string;
  prefix: string;
}

interface Context {
  pg: Postgres;
  db: Db;
  engines: AsteriskInstance[];
  orgs: Record<"a" | "b", Org>;
}

const test = suite<Context>("realtime pjsip on two nodes");

/** Creates an org through the domain (placed least-loaded) and writes its user 101's rows. */
async function orgWithUser(db: Db, name: string): Promise<Org> {
  await createOrganizationRecord(
    db,
    { name, slug: null, status: "active" },
    { serverKey, now: clock().toISOString() },
  );
  const row = await db
    .selectFrom("organizations")
    .select(["id", "context_prefix"])
    .where("name", "=", name)
    .executeTakeFirstOrThrow();
  const prefix = row.context_prefix;
  const loaded = loadOrgSources(
    [
      {
        file: `${name}.yaml`,
        text: `org: { id: ${row.id}, name: ${name}, context_prefix: ${prefix} }
users: [ { extension: "101", name: Alice, sip: { md5_cred: ${sipDigest(`${prefix}101`, PASSWORD)} } } ]
`,
      },
    ],
    {},
  );
  const errors = loaded.diagnostics.filter((d) => d.severity === "error");
  if (errors.length > 0) throw new Error(errors.map((d) => d.message).join("; "));
  const compiled = compileOrgPjsipRealtime(loaded.orgs[0]!.state, {});
  await createPjsipRealtimeRepository(db).replaceOrgRows({
    orgId: row.id,
    prefix,
    rows: compiled.rows,
    at: clock().toISOString(),
  });
  return { id: row.id, prefix };
}

function register(engine: AsteriskInstance, org: Org): Promise<string> {
  return registrationOutcome({
    user: `${org.prefix}101`,
    password: PASSWORD,
    registrar: `${engine.sipAddress}:${engine.sipPort}`,
  });
}

test.before(async (context) => {
  try {
    await setUp(context);
  } catch (error) {
    // uvu marks the suite failed without saying why a `before` hook threw.
    console.error(error);
    throw error;
  }
});

async function setUp(context: Context): Promise<void> {
  context.pg = await startPostgres();
  context.db = await openStore({ kind: "postgres", url: context.pg.url, poolSize: 4 });
  const deps = { db: context.db, config: { serverKey }, clock };
  for (const n of [1, 2]) {
    await createEngineNode(deps, {
      name: `node-${n}`,
      ami_username: "pbxctl",
      ami_secret: "unused-secret",
      sip_address: `127.0.0.1${n}`,
      capacity: 10,
    });
  }
  // Least loaded, then by name: A on node-1, B on node-2.
  context.orgs = {
    a: await orgWithUser(context.db, "OrgA"),
    b: await orgWithUser(context.db, "OrgB"),
  };
  context.engines = [];
  for (const n of [1, 2]) {
    context.engines.push(
      await boot([], {
        pjsipDatabaseUrl: context.pg.url,
        pjsipNode: `node-${n}`,
        sipBind: `127.0.0.1${n}`,
        systemName: `node-${n}`,
      }),
    );
  }
}

test.after(async (context) => {
  for (const engine of context.engines ?? []) await engine.stop();
  await context.db?.destroy();
  await context.pg?.stop();
});

test("each node boots clean on its own views; an org registers on its node and is refused on the other", async (context) => {
  const [one, two] = context.engines as [AsteriskInstance, AsteriskInstance];
  for (const engine of context.engines) {
    assert.equal(engine.problems(), [], engine.problems().join("\n"));
  }
  const { a, b } = context.orgs;
  assert.is(await register(one, a), "REGISTER_OK", "A on its node");
  assert.is(await register(two, a), "REGISTER_FAIL", "A refused on node-2");
  assert.is(await register(two, b), "REGISTER_OK", "B on its node");
  assert.is(await register(one, b), "REGISTER_FAIL", "B refused on node-1");
  // Asterisk asked its node's schema, never the shared tables.
  const queries = context.pg.log();
  assert.match(queries, `FROM pbx_node_node_2.ps_endpoints WHERE id = '${a.prefix}101'`);
  assert.not.match(queries, /FROM ps_endpoints WHERE/);
});

test("after a move, the source serves the org from its cache until the expiry, then refuses it; the target serves it", async (context) => {
  const [one, two] = context.engines as [AsteriskInstance, AsteriskInstance];
  const { a } = context.orgs;
  await pinOrg(context.db, a.id, { node: "node-2" }, clock().toISOString());
  assert.is(await register(two, a), "REGISTER_OK", "the target reads A's rows at once");
  assert.is(
    await register(one, a),
    "REGISTER_OK",
    "node-1's memory cache still holds A: the reason the expiry is needed",
  );

  // What node-1's deployer does when it sees A leave: every object of A expired there, verified.
  const node1 = (await findEngineNodeByName(context.db, "node-1"))!;
  const target = createAmiTarget({
    host: "127.0.0.1",
    port: one.amiPort,
    username: one.amiUsername,
    secret: one.amiSecret,
  });
  const realtime = new RealtimePjsip({
    db: context.db,
    builds: new StoreBuilds({ db: context.db, gateway: gatewayOptionsFrom({}) }),
    target,
    reloads: new ReloadQueue(target),
    node: { id: node1.id, name: node1.name },
  });
  try {
    await realtime.placementChanged(a.id);
    // Real timers here: a verification the engine contradicted at first is retried within it.
    await realtime.settled({ withinMs: 30_000 });
    assert.equal(await realtime.pending(), [], "expired and verified gone on node-1");
  } finally {
    await realtime.stop();
    await target.close();
  }
  assert.is(await register(one, a), "REGISTER_FAIL", "node-1 refuses A after the move");
  assert.is(await register(two, a), "REGISTER_OK");
  for (const engine of context.engines) {
    assert.equal(engine.problems(), [], engine.problems().join("\n"));
  }
});

test.run();
