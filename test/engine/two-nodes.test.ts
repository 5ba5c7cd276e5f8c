// Two engine nodes (issue 25): two real Asterisk 22 processes, SIP on 127.0.0.11 and 127.0.0.12
// with systemnames node-1 and node-2 (own ports, own temp dirs, stopped by PID), managed by the
// real service as engine nodes. Each node's tree, sounds and monitor directories are what the
// service has as `<nodes dir>/<name>`, `<name>.sounds` and `<name>.recordings` (links here, a
// mount on real machines: docs/nodes.md). Org A lives on node 1 and org B on node 2: each loads
// with no WARNING/ERROR on its node only, and neither node holds the other's files or media; a
// save to A reloads node 1 and nothing on node 2; a call into A's DID runs on node 1, one into
// B's DID on node 2 plays B's generated greeting from node 2's own sounds directory; B's
// recorded call on node 2 is stored as node 2's and downloads through the API; `org move A --to
// node-2` while a call of A is up on node 1 lets the call run to its end, then A's config and
// media are on node 2 only and A's next call runs there.
import { existsSync, mkdirSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { nodeRecordingsDir, nodeSoundsDir } from "../../src/deploy/node-dirs.js";
import type { NodeRuntime } from "../../src/deploy/node-runtime.js";
import type { AsteriskInstance } from "../../src/engine/testing/asterisk-instance.js";
import { fakeSpeechEngine } from "../api/ivrs-helpers.js";
import { holds } from "../deploy/fake-nodes.js";
import {
  type ApiAnswer,
  type ServerWithEngines,
  startServerWithEngines,
} from "../deploy/server-with-engines.js";
import { boot, silentWav, until } from "./helpers.js";
import { channelsIdle } from "./trace.js";

const PASSWORD = "two-nodes-password";

/** The far ends of the test's calls, on both engines. */
const TEST_DIALPLAN = `
[pbxtest-silent]
exten => s,1,Wait(15)
 same => n,Hangup()
[pbxtest-long]
exten => s,1,Wait(120)
 same => n,Hangup()
; a call of the org named by the globals, recorded by its own record step, answered by a talker
[pbxtest-rec]
exten => _X.,1,Set(CHANNEL(accountcode)=\${GLOBAL(REC_ORG)})
 same => n,Gosub(\${GLOBAL(REC_PREFIX)}record,s,1)
 same => n,Dial(Local/talk@pbxtest-talker,10)
 same => n,Hangup()
[pbxtest-talker]
exten => talk,1,Answer()
 same => n,Playback(\${GLOBAL(REC_SOUND)})
 same => n,Playback(\${GLOBAL(REC_SOUND)})
 same => n,Hangup()
`;

/** What a reload leaves in an engine's log (dialplan, PJSIP, queues, music on hold). */
const RELOADED = /Reloading module|reload(ed|ing)\b/i;

interface Org {
  id: string;
  prefix: string;
  headers: Record<string, string>;
  ivr: string;
  did: string;
}

interface Context {
  /** The service, its engine clock and its nodes (test/deploy/server-with-engines.ts). */
  nodes: ServerWithEngines;
  engines: AsteriskInstance[];
  admin: Record<string, string>;
  a: Org;
  b: Org;
}

const test = suite<Context>("two engine nodes");

function call(
  context: Context,
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: unknown,
): Promise<ApiAnswer> {
  return context.nodes.request(method, path, headers, body);
}

async function ok(
  context: Context,
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: unknown,
  // biome-ignore lint/suspicious/noExplicitAny: JSON answers are inspected field by field
): Promise<any> {
  const res = await call(context, method, path, headers, body);
  assert.ok(res.status < 300, `${method} ${path}: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

function runtime(context: Context, name: string): NodeRuntime {
  return context.nodes.runtime(name);
}

/** Waits for the org's save to reach its node's scheduler, then runs the deploy (real AMI). */
async function deployOn(context: Context, node: string, orgId: string): Promise<void> {
  const { scheduler } = runtime(context, node).engine.deploys;
  await until(`${orgId}'s deploy scheduled on ${node}`, () =>
    scheduler.pendingOrgs.includes(orgId) ? true : null,
  );
  await context.nodes.settle(6000);
}

/** An org with user 101, an IVR (generated greeting, 1 -> 101) and a DID routed to it. */
async function createOrg(context: Context, name: string, did: string, node: string): Promise<Org> {
  const created = await ok(context, "POST", "/organizations", context.admin, { name });
  const headers = { "x-api-key": created.api_key as string };
  const org = { id: created.id as string, prefix: created.context_prefix as string, headers };
  await ok(context, "POST", "/users", headers, { extension: "101", name: "Alice" });
  const ivr = await ok(context, "POST", "/ivrs", headers, { name: "Main", extension: "500" });
  await ok(context, "PUT", `/ivrs/${ivr.id}/menu`, headers, {
    options: [{ digit: "1", action_type: "extension", action_destination: "101" }],
  });
  await ok(context, "POST", `/ivrs/${ivr.id}/generate-greeting`, headers, {
    text: `Welcome to ${name}`,
  });
  // A pool DID (what the gateway dispatches), requested by the org and approved.
  const number = await ok(context, "POST", "/did-pool/admin", context.admin, { number: did });
  const request = await ok(context, "POST", `/did-pool/${number.id}/request`, headers);
  await ok(context, "POST", `/did-pool/admin/requests/${request.id}/approve`, context.admin);
  await ok(context, "PUT", `/dids/${number.id}/routing`, headers, {
    routing_type: "ivr",
    routing_destination: ivr.id,
  });
  await deployOn(context, node, org.id);
  return { ...org, ivr: ivr.id as string, did };
}

test.before(async (context) => {
  context.nodes = await startServerWithEngines({
    password: PASSWORD,
    replicaId: "two-nodes",
    realLeases: true,
    sqliteOnly: true,
  });
  const { dataDir, server } = context.nodes;
  context.admin = context.nodes.admin;
  server.pbx.deps.speechEngine = fakeSpeechEngine();
  const nodesDir = join(dataDir, "nodes");
  mkdirSync(nodesDir, { recursive: true });
  context.engines = [];
  for (const n of [1, 2]) {
    const engine = await boot([], {
      sipBind: `127.0.0.1${n}`,
      systemName: `node-${n}`,
      etcFiles: { "extensions_test.conf": TEST_DIALPLAN },
      extensionsAppend: '#include "extensions_test.conf"',
    });
    context.engines.push(engine);
    context.nodes.atClose(() => engine.stop());
    // What each node's Asterisk loads and plays, seen from the service as its node directories.
    symlinkSync(engine.generatedDir, join(nodesDir, `node-${n}`));
    symlinkSync(engine.soundsDir, nodeSoundsDir(nodesDir, `node-${n}`));
    mkdirSync(engine.recordingsDir, { recursive: true });
    symlinkSync(engine.recordingsDir, nodeRecordingsDir(nodesDir, `node-${n}`));
  }
  await context.nodes.addNodes(
    context.engines.map((engine) => ({
      amiHost: "127.0.0.1",
      amiPort: engine.amiPort,
      amiUsername: engine.amiUsername,
      amiSecret: engine.amiSecret,
      sipAddress: `${engine.sipAddress}:${engine.sipPort}`,
    })),
  );
  // Least loaded first: A goes to node-1, then B to node-2 (checked below).
  context.a = await createOrg(context, "A", "+918065978001", "node-1");
  context.b = await createOrg(context, "B", "+918065978002", "node-2");
  await ok(context, "POST", "/music-on-hold?name=waltz", context.b.headers, silentWav());
  await deployOn(context, "node-2", context.b.id);
});

test.after(async (context) => {
  await context.nodes?.close();
});

test("A loads on node 1 only and B on node 2 only, each with no warning; media follows", async (context) => {
  const { a, b, engines } = context;
  const [one, two] = engines as [AsteriskInstance, AsteriskInstance];
  for (const [org, node] of [
    [a, "node-1"],
    [b, "node-2"],
  ] as const) {
    const placement = await ok(
      context,
      "GET",
      `/admin/organizations/${org.id}/placement`,
      context.admin,
    );
    assert.is(placement.placement.node, node, JSON.stringify(placement));
  }
  assert.equal(one.problems(), [], "node 1 loaded with no WARNING/ERROR");
  assert.equal(two.problems(), [], "node 2 loaded with no WARNING/ERROR");
  assert.match(
    await one.cli(`dialplan show ${a.prefix}ivrm_500`),
    `Background(greetings/greeting_ivr_${a.ivr})`,
  );
  assert.match(
    await two.cli(`dialplan show ${b.prefix}ivrm_500`),
    `Background(greetings/greeting_ivr_${b.ivr})`,
  );
  assert.not.match(await two.cli("dialplan show"), a.prefix, "node 2 has none of A's contexts");
  assert.not.match(await one.cli("dialplan show"), b.prefix, "node 1 has none of B's contexts");
  assert.match(await two.cli("moh show classes"), `Directory: sounds/moh/${b.id}`);
  // The trees and the media: each org's files on its own node only.
  assert.ok(holds(one.generatedDir, a.id) && holds(two.generatedDir, b.id));
  assert.not.ok(holds(two.generatedDir, a.id), "A's files are absent from node 2's tree");
  assert.not.ok(holds(one.generatedDir, b.id), "B's files are absent from node 1's tree");
  const greeting = (org: Org) => join("greetings", `greeting_ivr_${org.ivr}.wav`);
  assert.ok(existsSync(join(one.soundsDir, greeting(a))));
  assert.ok(existsSync(join(two.soundsDir, greeting(b))));
  assert.ok(existsSync(join(two.soundsDir, "moh", b.id, "waltz.wav")));
  assert.not.ok(existsSync(join(two.soundsDir, greeting(a))), "A's greeting is not on node 2");
  assert.not.ok(existsSync(join(one.soundsDir, greeting(b))), "B's greeting is not on node 1");
  assert.not.ok(existsSync(join(one.soundsDir, "moh", b.id)), "B's music is not on node 1");
});

test("a save to A reloads node 1 and nothing on node 2", async (context) => {
  const [one, two] = context.engines as [AsteriskInstance, AsteriskInstance];
  const since = [one.log().length, two.log().length];
  await ok(context, "POST", "/users", context.a.headers, { extension: "102", name: "Bob" });
  await deployOn(context, "node-1", context.a.id);
  assert.match(await one.cli(`dialplan show 102@${context.a.prefix}internal`), "102");
  assert.match(one.log().slice(since[0]), RELOADED, "node 1 reloaded");
  assert.not.match(two.log().slice(since[1]), RELOADED, "node 2 did not");
  assert.equal(one.problems(since[0]), [], "with no WARNING/ERROR");
});

test("a call into A's DID runs on node 1; one into B's DID plays B's greeting on node 2", async (context) => {
  const [one, two] = context.engines as [AsteriskInstance, AsteriskInstance];
  for (const [engine, org, other] of [
    [one, context.a, two],
    [two, context.b, one],
  ] as const) {
    await channelsIdle(engine);
    const since = engine.log().length;
    await engine.cli(
      `channel originate Local/${org.did}@gateway-inbound extension s@pbxtest-silent`,
    );
    const played = new RegExp(`Playing 'greetings/greeting_ivr_${org.ivr}\\.`);
    await engine.waitForLog(played, { since });
    assert.equal(engine.problems(since), [], "the call logged no WARNING/ERROR");
    // The other node's gateway does not dispatch the DID: its org does not live there.
    assert.not.match(await other.cli("dialplan show gateway-inbound"), org.did.slice(1));
    await engine.cli("channel request hangup all");
    await channelsIdle(engine);
  }
});

test("B's recorded call on node 2: its record names node 2, its recording downloads through the API", async (context) => {
  const [, two] = context.engines as [AsteriskInstance, AsteriskInstance];
  const { b } = context;
  await channelsIdle(two);
  await two.cli(`dialplan set global REC_ORG ${b.id}`);
  await two.cli(`dialplan set global REC_PREFIX ${b.prefix}`);
  await two.cli(`dialplan set global REC_SOUND greetings/greeting_ivr_${b.ivr}`);
  await two.cli("channel originate Local/100@pbxtest-rec application Wait 5");
  await channelsIdle(two, 30_000);
  const db = context.nodes.server.pbx.deps.db;
  const record = await until("B's recorded call stored", async () => {
    const row = await db
      .selectFrom("call_records")
      .select(["linkedid", "node_id", "recording_file"])
      .where("org_id", "=", b.id)
      .where("recording_file", "is not", null)
      .executeTakeFirst();
    return row ?? null;
  });
  assert.is(record.node_id, runtime(context, "node-2").node.id, "the call record names node 2");
  assert.match(record.linkedid, /^node-2-/, "node 2's systemname prefixes its ids");
  const download = await call(context, "GET", `/calls/${record.linkedid}/recording`, b.headers);
  assert.is(download.status, 200, JSON.stringify(download.body));
  assert.is(new TextDecoder("latin1").decode(download.bytes.subarray(0, 4)), "RIFF");
  assert.ok(download.bytes.length > 44 + 1600, `it holds audio (${download.bytes.length} bytes)`);
  const other = await call(
    context,
    "GET",
    `/calls/${record.linkedid}/recording`,
    context.a.headers,
  );
  assert.is(other.status, 404, "another org never gets it");
});

test("org move A --to node-2 while a call of A is up on node 1: the call runs to its end, then A is on node 2 only", async (context) => {
  const [one, two] = context.engines as [AsteriskInstance, AsteriskInstance];
  const { a, admin } = context;
  await channelsIdle(one);
  // A's call: its DID into its IVR on node 1, the caller staying on the line.
  const since = one.log().length;
  await one.cli(`channel originate Local/${a.did}@gateway-inbound extension s@pbxtest-long`);
  await one.waitForLog(new RegExp(`Playing 'greetings/greeting_ivr_${a.ivr}\\.`), { since });
  const moved = await call(context, "POST", `/admin/organizations/${a.id}/move`, admin, {
    to: "node-2",
    call_drain_timeout_seconds: 300,
  });
  assert.is(moved.status, 202, JSON.stringify(moved.body));
  // The move waits for the call: A is already on node 2, still on node 1 while the call is up.
  const draining = await until(
    "the move waiting for A's call on node 1",
    async () => {
      const move = (await call(context, "GET", `/admin/organizations/${a.id}/move`, admin)).body;
      return move.phase === "draining" && move.drain?.calls >= 1 ? move : null;
    },
    60_000,
  );
  assert.is(draining.to_node, "node-2");
  assert.match(await two.cli(`dialplan show ${a.prefix}ivrm_500`), `greeting_ivr_${a.ivr}`);
  assert.ok(existsSync(join(two.soundsDir, "greetings", `greeting_ivr_${a.ivr}.wav`)));
  assert.match(await one.cli("core show channels count"), /^[1-9]\d* active channels?/m);
  assert.match(await one.cli(`dialplan show ${a.prefix}ivrm_500`), `greeting_ivr_${a.ivr}`);
  // The caller hangs up: the call ended by itself, never cut; then A leaves node 1.
  await one.cli("channel request hangup all");
  await channelsIdle(one);
  const done = await until(
    "the move done",
    async () => {
      const move = (await call(context, "GET", `/admin/organizations/${a.id}/move`, admin)).body;
      return move.phase === "done" ? move : null;
    },
    60_000,
  );
  assert.is(done.drain.timed_out, false, "the move waited for the call, no timeout");
  assert.not.ok(holds(one.generatedDir, a.id), "A's config is gone from node 1");
  assert.ok(holds(two.generatedDir, a.id), "and on node 2");
  assert.not.ok(
    existsSync(join(one.soundsDir, "greetings", `greeting_ivr_${a.ivr}.wav`)),
    "A's media left node 1 with it",
  );
  assert.not.match(await one.cli("dialplan show gateway-inbound"), a.did.slice(1));
  // A new call of A runs on node 2, its greeting from node 2's own sounds.
  await channelsIdle(two);
  const from = two.log().length;
  await two.cli(`channel originate Local/${a.did}@gateway-inbound extension s@pbxtest-silent`);
  await two.waitForLog(new RegExp(`Playing 'greetings/greeting_ivr_${a.ivr}\\.`), { since: from });
  assert.equal(two.problems(from), [], "with no WARNING/ERROR");
  await two.cli("channel request hangup all");
  await channelsIdle(two);
  assert.equal(one.problems(since), [], "node 1 logged no WARNING/ERROR through the move");
});

test.run();
