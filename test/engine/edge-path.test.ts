// A real Asterisk 22 behind the real Kamailio edge (issue 26, Path): a baresip phone on
// 127.0.0.2 registers through the edge on 127.0.0.10 with the org's credentials; the edge adds
// Path and Supported: path, the node (AORs compiled behind the edge: support_path=yes) keeps it;
// a call Asterisk places to the phone then reaches it through the edge, the only address of the
// phone Asterisk has. Skipped, saying so, where Kamailio is not installed.
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { compileAll } from "../../src/compiler/index.js";
import type { AsteriskInstance } from "../../src/engine/testing/asterisk-instance.js";
import { loadOrgSources } from "../../src/model/files.js";
import { sipDigest } from "../../src/model/secrets.js";
import { missingTools, type RunningEdge, startEdge } from "../cluster/edge-harness.js";
import { type Baresip, startBaresip } from "./baresip.js";
import { boot, until } from "./helpers.js";

const ORG = "aaaaaaaa-0000-4000-8000-000000000001";
const PREFIX = `org_${ORG}_`;
const PASSWORD = "edge-path-secret";

const ORG_YAML = `
org: { id: ${ORG}, name: Acme, context_prefix: ${PREFIX} }
users:
  - { extension: "101", name: Alice, sip: { md5_cred: ${sipDigest(`${PREFIX}101`, PASSWORD)} } }
`;

interface Context {
  engine: AsteriskInstance;
  edge: RunningEdge;
  phone: Baresip;
}

const test = suite<Context>("a phone behind the edge");
const missing = missingTools();

test.before(async (context) => {
  const loaded = loadOrgSources([{ file: "acme.yaml", text: ORG_YAML }], {});
  const errors = loaded.diagnostics.filter((d) => d.severity === "error");
  if (errors.length > 0) throw new Error(errors.map((d) => d.message).join("; "));
  const files = compileAll(
    loaded.orgs.map((o) => o.state),
    { environment: "prod", staging_endpoint: "staging-tunnel" },
    { behindEdge: true },
  ).files;
  context.engine = await boot(files);
  context.edge = await startEdge(
    {
      nodes: [
        { name: "node-1", sip_address: `127.0.0.1:${context.engine.sipPort}`, state: "active" },
      ],
      orgs: [{ org_id: ORG, context_prefix: PREFIX, primary: "node-1", standby: null, dids: [] }],
      carriers: [],
    },
    1,
  );
});

test.after(async (context) => {
  await context.phone?.stop();
  await context.edge?.stop();
  await context.engine?.stop();
});

test("the phone registers through the edge; the node keeps the edge's Path", async (context) => {
  context.phone = await startBaresip({
    user: `${PREFIX}101`,
    password: PASSWORD,
    registrar: `127.0.0.10:${context.edge.sipPort}`,
    listenHost: "127.0.0.2",
  });
  const registered = await context.phone.waitForEvent((e) => /^REGISTER_(OK|FAIL)$/.test(e.type));
  assert.is(registered.type, "REGISTER_OK", JSON.stringify(registered));
  // Behind the edge the contact's source is the edge (rewrite_contact), and its Path is kept.
  const contactId = await until("the phone's contact", async () => {
    const listed = await context.engine.cli(`pjsip show aor ${PREFIX}101`);
    return new RegExp(`Contact:\\s+(${PREFIX}101/sip:\\S+)`).exec(listed)?.[1] ?? null;
  });
  const contact = await context.engine.cli(`pjsip show contact ${contactId}`);
  assert.match(
    contact,
    /path\s+:\s+<sip:127\.0\.0\.10:\d+;lr;received=sip:127\.0\.0\.2:\d+>/,
    contact,
  );
  assert.match(await context.engine.cli(`pjsip show aor ${PREFIX}101`), /support_path\s+:\s+true/);
  assert.equal(context.engine.problems(), [], context.engine.problems().join("\n"));
});

test("a call from the node reaches the phone through the edge", async (context) => {
  const since = context.phone.events.length;
  await context.engine.cli(`channel originate PJSIP/${PREFIX}101 application Wait 5`);
  const incoming = await context.phone.waitForEvent((e) => e.type === "CALL_INCOMING", {
    since,
    timeoutMs: 10_000,
  });
  assert.ok(incoming, "the phone was called");
  await context.phone.command("hangup").catch(() => "");
});

if (missing) {
  console.warn(`SKIPPED a phone behind the edge: ${missing}`);
} else {
  test.run();
}
