// No value from the model can add a line, a section, a comment or an application call to any
// generated file. The string fields are found by walking the schema, so a field added later is
// covered without touching this test.
import type { TSchema } from "@sinclair/typebox";
import { Ajv } from "ajv";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { type CompileResult, compileAll } from "../../src/compiler/index.js";
import { type OrgState, OrgStateSchema } from "../../src/model/org-state.js";

const PAYLOAD = 'Zq;--[evil]),Hangup(),${SHELL(id)}$[1+1]|"<>&\\^#include /etc/passwd';
const NEWLINE_PAYLOAD = "x\n[evil]\nexten => 1,1,System(id)";

const ajv = new Ajv({ useDefaults: true, allErrors: true });
const validate = ajv.compile<OrgState>(OrgStateSchema);

const MD5 = "5f4dcc3b5aa765d61d8327deb882cf99";
const ORG = "aaaaaaaa-0000-4000-8000-000000000001";
const IVR = "aaaaaaaa-0000-4000-8000-0000000000b1";
const IVR2 = "aaaaaaaa-0000-4000-8000-0000000000b2";

/** An org with one of everything, so that every string field has a place to land. */
function baseOrg(): Record<string, unknown> {
  return {
    org: {
      id: ORG,
      name: "Acme",
      slug: "acme",
      context_prefix: `org_${ORG}_`,
      settings: { max_concurrent_calls: 3 },
    },
    users: [
      {
        id: "aaaaaaaa-0000-4000-8000-0000000000c1",
        extension: "1001",
        name: "Alice",
        outbound_did: "+918065978001",
        sip: { md5_cred: MD5, password_env: "ALICE_SIP" },
      },
      { extension: "1002", name: "Bob", ring_target: "phone", phone_number: "+919812345678" },
    ],
    queues: [
      {
        id: "aaaaaaaa-0000-4000-8000-0000000000a1",
        number: "600",
        name: "Sales",
        timeout_destination_type: "phone",
        timeout_destination: "+919812345678",
        members: [{ extension: "1001" }],
      },
    ],
    ivrs: [
      {
        id: IVR,
        name: "Main",
        extension: "500",
        description: "Main menu",
        greeting_prompt: `greeting_ivr_${IVR}`,
        options: [
          {
            digit: "1",
            action_type: "callback",
            action_destination: "+919812345678",
            description: "call me",
          },
          { digit: "2", action_type: "voicemail", action_destination: "1001" },
          { digit: "3", action_type: "ivr", action_destination: IVR2 },
        ],
      },
      { id: IVR2, name: "Other", extension: "501" },
    ],
    dids: [
      {
        id: "aaaaaaaa-0000-4000-8000-0000000000d1",
        number: "+918065978001",
        is_default: true,
        routing_type: "external",
        routing_destination: "+919812345678",
      },
    ],
    trunks: [
      {
        id: "aaaaaaaa-0000-4000-8000-0000000000e1",
        name: "carrier",
        host: "203.0.113.10",
        username: "acme",
        password: "secret",
        password_env: "TRUNK",
        registration: true,
        match: ["198.51.100.0/24"],
      },
    ],
    outbound_routes: [
      {
        id: "aaaaaaaa-0000-4000-8000-0000000000f1",
        name: "All",
        patterns: ["_X."],
        trunk: "carrier",
        prepend_digits: "0",
        caller_id_override: "+918065978002",
      },
    ],
    time_conditions: [
      {
        id: "aaaaaaaa-0000-4000-8000-000000000071",
        name: "office",
        description: "Office hours",
        time_zone: "Europe/London",
        ranges: [{ days: ["mon", "fri"], start: "09:00", end: "17:00" }],
        exceptions: [
          {
            name: "Christmas",
            start_date: "2026-12-25",
            end_date: "2026-12-26",
            destination_type: "voicemail",
            destination: "1001",
          },
        ],
        open_destination_type: "queue",
        open_destination: "600",
        closed_destination_type: "external",
        closed_destination: "+919812345678",
      },
    ],
    music_on_hold: ["hold-music"],
    recording_consent_refused: ["+15551234567"],
  };
}

/** Paths of every string-valued field in a schema, arrays written `[]`. */
function stringPaths(schema: TSchema, path: string[] = []): string[][] {
  const node = schema as Record<string, unknown>;
  if (Array.isArray(node.anyOf))
    return (node.anyOf as TSchema[]).flatMap((member) => stringPaths(member, path));
  if (node.type === "object") {
    return Object.entries(node.properties as Record<string, TSchema>).flatMap(([key, child]) =>
      stringPaths(child, [...path, key]),
    );
  }
  if (node.type === "array") return stringPaths(node.items as TSchema, [...path, "[]"]);
  if (node.type === "string" && node.const === undefined) return [path];
  return [];
}

const PATHS = [...new Map(stringPaths(OrgStateSchema).map((p) => [p.join("."), p])).values()];

function withValue(path: string[], value: string): Record<string, unknown> {
  const org = baseOrg();
  let node: unknown = org;
  path.forEach((key, index) => {
    const last = index === path.length - 1;
    const container = node as Record<string, unknown> & unknown[];
    if (key === "[]") {
      if (last) container[0] = value;
      else node = container[0];
    } else if (last) container[key] = value;
    else node = container[key];
  });
  return org;
}

/** `${NAME` and `$[` forms the compiler itself writes; anything else came from data. */
const OWN_VARIABLES =
  /\$\{(EXTEN|ARG1|OUT_CID|CALLER_EXT|PBX_REQUEST_CID|UNIQUEID|IVR_RETRIES|RECORDING|CALLERID\(num\)|FILTER\(|IF\(|GROUP_COUNT\(|DIALPLAN_EXISTS\(|CONSENT_PEER|LEN\(|PJSIP_DIAL_CONTACTS\(|TC_TODAY|STRFTIME\(\$\{EPOCH\}|EPOCH)/;
const PJSIP_KEY = /^[a-z_]+=/;

/** Problems with one compiled file, judged line by line against what the compiler may write. */
function unsafeLines(path: string, content: string): string[] {
  const problems: string[] = [];
  const dialplan = path.endsWith("extensions.conf");
  for (const line of content.split("\n")) {
    if (line === "" || line.startsWith("; ")) {
      if (line.includes("\r")) problems.push(`carriage return: ${line}`);
      if (line.slice(1).includes(";")) problems.push(`';' inside a comment: ${line}`);
      continue;
    }
    if (line.startsWith("[")) {
      if (!/^\[[A-Za-z0-9_+*#.@:-]+\]$/.test(line)) problems.push(`odd section: ${line}`);
      continue;
    }
    if (line.startsWith('#include "')) continue;
    if (dialplan) {
      const match =
        /^(?:exten => [^,]+,1|include => [A-Za-z0-9_-]+$| same => n)(?:\([a-z]+\))?,?(.*)$/.exec(
          line,
        );
      if (!match) {
        problems.push(`unexpected dialplan line: ${line}`);
        continue;
      }
      const app = match[1] ?? "";
      if (line.startsWith("include")) continue;
      if (!/^[A-Za-z]+\(.*\)$/.test(app)) problems.push(`not one application call: ${line}`);
      let depth = 0;
      for (const ch of app) {
        depth += ch === "(" ? 1 : ch === ")" ? -1 : 0;
        if (depth < 0) problems.push(`unbalanced parentheses: ${line}`);
      }
      if (depth !== 0) problems.push(`unbalanced parentheses: ${line}`);
      for (const at of app.matchAll(/\$\{/g)) {
        if (!OWN_VARIABLES.test(app.slice(at.index))) problems.push(`foreign \${...}: ${line}`);
      }
      for (const at of app.matchAll(/\$\[/g)) {
        if (!/^\$\["?\$\{/.test(app.slice(at.index))) problems.push(`foreign $[...]: ${line}`);
      }
      if (/[;&|"<>\\^]/.test(withoutExpressions(app))) problems.push(`stray character: ${line}`);
    } else {
      const mailbox = path.endsWith("voicemail.conf") && /^[0-9]+=/.test(line);
      if (!PJSIP_KEY.test(line) && !mailbox) problems.push(`unexpected config line: ${line}`);
      // mailbox => password,full name: a comma from data would add an email address field.
      if (mailbox && line.split(",").length !== 2) problems.push(`extra mailbox field: ${line}`);
      if (/(^|[^\\]);/.test(line)) problems.push(`unescaped ';': ${line}`);
      // interface, penalty, member name, state interface: a comma from data would add a field.
      if (line.startsWith("member=") && line.split(",").length > 4)
        problems.push(`extra member field: ${line}`);
    }
  }
  return problems;
}

/** The text outside `$[...]` expressions (which hold `"`, `<` and `>` legitimately). */
function withoutExpressions(app: string): string {
  let out = "";
  let depth = 0;
  for (let i = 0; i < app.length; i++) {
    if (app[i] === "$" && app[i + 1] === "[") {
      depth++;
      i++;
    } else if (depth > 0 && app[i] === "[") depth++;
    else if (depth > 0 && app[i] === "]") depth--;
    else if (depth === 0) out += app[i];
  }
  return out;
}

function sectionsOf(result: CompileResult): string[] {
  return result.files.flatMap((f) =>
    f.content
      .split("\n")
      .filter((l) => l.startsWith("["))
      .map((l) => `${f.path} ${l}`),
  );
}

function compile(org: Record<string, unknown>): CompileResult {
  return compileAll([org as OrgState], { environment: "prod", staging_endpoint: "staging-tunnel" });
}

const baseline = compile(validated(baseOrg()));

function validated(org: Record<string, unknown>): Record<string, unknown> {
  if (!validate(org)) throw new Error(ajv.errorsText(validate.errors));
  return org;
}

test("the base org compiles cleanly and passes the line grammar", () => {
  assert.equal(
    baseline.diagnostics.filter((d) => d.severity === "error"),
    [],
  );
  for (const file of baseline.files)
    assert.equal(unsafeLines(file.path, file.content), [], file.path);
});

test("the schema has many string fields, all found", () => {
  const names = PATHS.map((p) => p.join("."));
  for (const expected of [
    "org.name",
    "users.[].name",
    "ivrs.[].options.[].description",
    "outbound_routes.[].name",
    "trunks.[].password",
  ]) {
    assert.ok(names.includes(expected), `${expected} not found in ${names.join(", ")}`);
  }
  assert.ok(PATHS.length >= 40, `only ${PATHS.length} string fields`);
});

for (const path of PATHS) {
  const name = path.join(".");

  test(`${name}: a newline is refused by the schema`, () => {
    assert.not.ok(validate(withValue(path, NEWLINE_PAYLOAD)), `${name} accepted a newline`);
  });

  test(`${name}: hostile text cannot change the structure of any file`, () => {
    const org = withValue(path, PAYLOAD);
    if (!validate(org)) return; // refused outright by the schema: nothing reaches the compiler
    const result = compile(org);
    for (const file of result.files) {
      assert.equal(unsafeLines(file.path, file.content), [], `${name} in ${file.path}`);
    }
    const before = new Set(sectionsOf(baseline));
    for (const section of sectionsOf(result))
      assert.ok(before.has(section), `${name} added ${section}`);
  });
}

test.run();
