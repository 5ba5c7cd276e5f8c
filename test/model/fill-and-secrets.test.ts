import { createHash } from "node:crypto";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { formatDiagnostic, loadOrgSource } from "../../src/model/files.js";
import { deterministicId } from "../../src/model/fill.js";
import { resolveSecrets, sipDigest } from "../../src/model/secrets.js";
import { makeState, ORG_ID } from "./org-fixture.js";

const OTHER_ORG = "99999999-2222-4333-8444-555555555555";
const TEXT = [
  "org:",
  `  id: ${ORG_ID}`,
  "  name: Acme",
  "users:",
  "  - { extension: 1001, name: Alice, sip: { password_env: ALICE_PASSWORD } }",
  "queues: [{ number: 2000, name: Sales }]",
  "ivrs: [{ name: Main, extension: 3000 }]",
  "dids: [{ number: '+918065978001' }]",
  "trunks: [{ name: carrier, host: sip.example.net, password_env: TRUNK_PASSWORD }]",
  "outbound_routes: [{ name: All, patterns: ['_X.'], trunk: carrier }]",
  "",
].join("\n");
const ENV = { ALICE_PASSWORD: "s3cret", TRUNK_PASSWORD: "tr-pass" };

test("omitted ids are UUIDs derived from org id, kind and key: same file, same ids", () => {
  const a = loadOrgSource({ file: "a.yaml", text: TEXT }, ENV).state!;
  const b = loadOrgSource({ file: "b.yaml", text: TEXT }, ENV).state!;
  const ids = (s: typeof a) => [
    s.users[0]!.id,
    s.queues[0]!.id,
    s.ivrs[0]!.id,
    s.dids[0]!.id,
    s.trunks[0]!.id,
    s.outbound_routes[0]!.id,
  ];
  assert.equal(ids(a), ids(b));
  assert.is(new Set(ids(a)).size, 6);
  for (const id of ids(a))
    assert.match(id!, /^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  assert.is(a.users[0]!.id, deterministicId(ORG_ID, "user", "1001"));
  // The same extension in another org gets another id; another kind with the same key too.
  assert.is.not(deterministicId(OTHER_ORG, "user", "1001"), a.users[0]!.id);
  assert.is.not(deterministicId(ORG_ID, "queue", "1001"), a.users[0]!.id);
  // DIDs are keyed by the number in any spelling.
  assert.is(deterministicId(ORG_ID, "did", "918065978001"), a.dids[0]!.id);
  // The ids of files already deployed never change (RFC 9562 version 5, SHA-1).
  const dnsNamespace = "6ba7b810-9dad-11d1-80b4-00c04fd430c8";
  assert.is(deterministicId(dnsNamespace, "user", "1001"), "aa61e33f-4216-58cb-8a60-7fea27591338");
  assert.is(
    deterministicId(dnsNamespace, "did", "918065978001"),
    "a32b27d3-2aca-5a1d-ab50-6d6f1e70e06f",
  );
});

test("ids are RFC 9562 version 5 for any key: long ones, non-ASCII ones, orgs taken in turn", () => {
  // Version 5 by the RFC's own steps, one Hash object per id.
  const rfc = (orgId: string, name: string) => {
    const bytes = createHash("sha1")
      .update(Buffer.from(orgId.replace(/-/g, ""), "hex"))
      .update(name)
      .digest();
    bytes[6] = (bytes[6]! & 0x0f) | 0x50;
    bytes[8] = (bytes[8]! & 0x3f) | 0x80;
    const hex = bytes.toString("hex", 0, 16);
    return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
  };
  // A key longer than any before it (the reused buffer grows), then short ones again; keys in
  // several scripts; two orgs alternating (each switch re-reads the namespace).
  const keys = [
    "1001",
    "x".repeat(700),
    "",
    "Zürich",
    "営業",
    "🙂 lobby",
    "y".repeat(2000),
    "2000",
  ];
  for (const key of keys) {
    for (const org of [ORG_ID, OTHER_ORG]) {
      assert.is(deterministicId(org, "queue", key), rfc(org, `queue:${key}`), `${org} ${key}`);
    }
  }
});

test("an id written in the file is kept", () => {
  const state = makeState((d) => {
    d.users[0].id = OTHER_ORG;
  });
  assert.is(state.users[0]!.id, OTHER_ORG);
});

test("password_env becomes md5_cred of <context_prefix><extension>:pbxctl:<password>", () => {
  const { state, diagnostics } = loadOrgSource({ file: "a.yaml", text: TEXT }, ENV);
  assert.equal(diagnostics, []);
  const expected = createHash("md5").update(`org_${ORG_ID}_1001:pbxctl:s3cret`).digest("hex");
  assert.is(state!.users[0]!.sip!.md5_cred, expected);
  assert.is(sipDigest(`org_${ORG_ID}_1001`, "s3cret"), expected);
  assert.is(state!.trunks[0]!.password, "tr-pass");
});

test("a missing environment variable is an error at the reference", () => {
  const { diagnostics } = loadOrgSource({ file: "a.yaml", text: TEXT }, { TRUNK_PASSWORD: "" });
  assert.equal(diagnostics.map(formatDiagnostic), [
    "a.yaml:5:58 users[0].sip.password_env: environment variable ALICE_PASSWORD is not set",
    "a.yaml:9:64 trunks[0].password_env: environment variable TRUNK_PASSWORD is not set",
  ]);
});

test("a secret given twice is an error; a plaintext trunk password is a warning", () => {
  const state = makeState((d) => {
    d.users[0].sip = { md5_cred: "0".repeat(32), password_env: "X" };
    d.trunks[0].password = "plain";
  });
  assert.equal(resolveSecrets(state, { X: "y" }), [
    { severity: "error", path: "users[0].sip", message: "set md5_cred or password_env, not both" },
    {
      severity: "warning",
      path: "trunks[0].password",
      message: "plaintext password in the file; prefer password_env",
    },
  ]);
});

test("UUIDs written in upper case are kept in lower case, references included", () => {
  const ivrId = "AAAAAAAA-BBBB-4CCC-8DDD-EEEEEEEEEEEE";
  const text = [
    "org:",
    "  id: 0000000A-2222-4333-8444-55555555555B",
    "  name: Acme",
    `ivrs: [{ id: ${ivrId}, name: Main, extension: 3000 }, { name: Sub, extension: 3001, options: [{ digit: '1', action_type: ivr, action_destination: ${ivrId} }] }]`,
    "",
  ].join("\n");
  const { state, diagnostics } = loadOrgSource({ file: "a.yaml", text }, ENV);
  assert.equal(diagnostics, []);
  assert.is(state!.org.id, "0000000a-2222-4333-8444-55555555555b");
  assert.is(state!.ivrs[0]!.id, ivrId.toLowerCase());
  assert.is(state!.ivrs[1]!.options[0]!.action_destination, ivrId.toLowerCase());
});

test.run();
