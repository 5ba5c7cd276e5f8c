import { test } from "uvu";
import * as assert from "uvu/assert";
import { formatDiagnostic, loadOrgSource, loadOrgSources } from "../../src/model/files.js";

const ORG = "11111111-2222-4333-8444-555555555555";

function load(lines: string[], env: Record<string, string> = {}) {
  return loadOrgSource({ file: "orgs/acme.yaml", text: `${lines.join("\n")}\n` }, env);
}

function messages(lines: string[], env: Record<string, string> = {}): string[] {
  return load(lines, env).diagnostics.map(formatDiagnostic);
}

test("a broken file reports every problem at once, each at its node's line:col", () => {
  const out = messages([
    "org:", // 1
    `  id: ${ORG}`, // 2
    "  name: Acme", // 3
    "users:", // 4
    "  - extension: 1001", // 5
    "    name: Alice", // 6
    "    sip: { password_env: ALICE_PASSWORD }", // 7
    "  - extension: 1001", // 8
    "    name: Bob", // 9
    "    sip: { md5_cred: 0123456789abcdef0123456789abcdef }", // 10
    "queues:", // 11
    "  - number: 2000", // 12
    "    name: Sales", // 13
    "    timeout_destination_type: phone", // 14
    "    timeout_destination: '12ab'", // 15
    "ivrs:", // 16
    "  - name: Main", // 17
    "    extension: 3000", // 18
    "    options:", // 19
    "      - digit: 1", // 20
    "        action_type: queue", // 21
    "        action_destination: 2099", // 22
    "      - digit: x", // 23
    "        action_type: dance", // 24
    "      - digit: 1", // 25
    "        action_type: extension", // 26
    "dids:", // 27
    "  - number: +918065978000", // 28
  ]);
  assert.equal(out, [
    "orgs/acme.yaml:7:26 users[0].sip.password_env: environment variable ALICE_PASSWORD is not set",
    "orgs/acme.yaml:8:16 users[1].extension: Extension 1001 is already assigned to user 'Alice'",
    "orgs/acme.yaml:15:26 queues[0].timeout_destination: Phone number 12ab does not look like a valid number (need 7-15 digits)",
    "orgs/acme.yaml:22:29 ivrs[0].options[0].action_destination: no queue with number 2099",
    "orgs/acme.yaml:23:16 ivrs[0].options[1].digit: Invalid digit: x (allowed: 0-9, * or #)",
    "orgs/acme.yaml:24:22 ivrs[0].options[1].action_type: Invalid action_type: dance (allowed: extension, queue, ivr, ai_agent, voicemail, callback, hangup, time_condition)",
    // A missing key is reported at its parent (the option's mapping).
    "orgs/acme.yaml:25:9 ivrs[0].options[2].action_destination: action_destination required for action_type=extension",
    "orgs/acme.yaml:25:16 ivrs[0].options[2].digit: digit 1 is already used by options[0]",
    "orgs/acme.yaml:28:13 dids[0].number: +918065978000 is the reserved sentinel number and cannot belong to an org",
  ]);
});

test("music_on_hold: file names only, each once, at file:line:col", () => {
  assert.equal(
    messages([
      "org:", // 1
      `  id: ${ORG}`, // 2
      "  name: Acme", // 3
      'music_on_hold: [ jazz, "../etc/passwd", jazz, "Loud Song" ]', // 4
    ]),
    [
      "orgs/acme.yaml:4:24 music_on_hold[1]: must be a file name without .wav: lowercase letters, digits, _ and -, at most 64",
      "orgs/acme.yaml:4:41 music_on_hold[2]: is the same as item [0]",
      "orgs/acme.yaml:4:47 music_on_hold[3]: must be a file name without .wav: lowercase letters, digits, _ and -, at most 64",
    ],
  );
  const loaded = load([`org: { id: ${ORG}, name: Acme }`, "music_on_hold: [ jazz, hold_2 ]"]);
  assert.equal(loaded.diagnostics, []);
  assert.equal(loaded.state?.music_on_hold, ["jazz", "hold_2"]);
});

test("schema problems get readable messages and positions", () => {
  const out = messages([
    "org:", // 1
    `  id: ${ORG}`, // 2
    "  name: Acme", // 3
    "  colour: blue", // 4
    "users:", // 5
    "  - extension: 12a", // 6
    "    name: Alice", // 7
    "    ring_time: 0", // 8
    "queues:", // 9
    "  - number: 2000", // 10
    "    strategy: roundrobin", // 11
    "dids:", // 12
    "  - number: '+1555'", // 13
    "    routing_type: fax", // 14
  ]);
  assert.equal(out, [
    'orgs/acme.yaml:4:3 org.colour: unknown field "colour"',
    "orgs/acme.yaml:6:16 users[0].extension: must be 2-15 digits",
    "orgs/acme.yaml:8:16 users[0].ring_time: must be >= 1",
    "orgs/acme.yaml:10:5 queues[0].name: is required",
    "orgs/acme.yaml:11:15 queues[0].strategy: must be one of: ringall, leastrecent, fewestcalls, random, rrmemory, linear, wrandom",
    "orgs/acme.yaml:13:13 dids[0].number: must be a number: optional +, then 6-15 digits",
    "orgs/acme.yaml:14:19 dids[0].routing_type: must be one of: extension, queue, ivr, external, time_condition (or empty)",
  ]);
  assert.is(load(["org:", `  id: ${ORG}`, "  name: Acme", "  colour: blue"]).state, null);
});

test("a wrong type says what was expected", () => {
  const out = messages(["org:", `  id: ${ORG}`, "  name: Acme", "users: none"]);
  assert.equal(out, ["orgs/acme.yaml:4:8 users: must be a list"]);
});

test("YAML syntax errors stop loading and are placed in the file", () => {
  const result = load(["org:", `  id: ${ORG}`, "  name: Acme", "  name: Again"]);
  assert.is(result.state, null);
  assert.is(result.diagnostics.length, 1);
  const [d] = result.diagnostics;
  assert.is(d!.line, 4);
  assert.is(d!.col, 3);
  assert.match(formatDiagnostic(d!), /^orgs\/acme\.yaml:4:3: Map keys must be unique/);
});

test("an empty file is an error, not a crash", () => {
  const result = loadOrgSource({ file: "orgs/empty.yaml", text: "# nothing\n" }, {});
  assert.equal(result.diagnostics.map(formatDiagnostic), [
    "orgs/empty.yaml:1:1: empty file: expected `org:`",
  ]);
});

test("bare numbers keep their text where the schema wants a string", () => {
  const { state, diagnostics } = load([
    "org:",
    `  id: ${ORG}`,
    "  name: Acme",
    "users:",
    "  - { extension: 0101, name: Zero, ring_time: 45, sip: { md5_cred: 0123456789abcdef0123456789abcdef } }",
    "dids:",
    "  - number: +918065978001",
    "    routing_type: extension",
    "    routing_destination: 0101",
  ]);
  assert.equal(diagnostics, []);
  assert.is(state!.users[0]!.extension, "0101");
  assert.is(state!.users[0]!.ring_time, 45);
  assert.is(state!.dids[0]!.number, "+918065978001");
  assert.is(state!.dids[0]!.routing_destination, "0101");
});

test("defaults come from the schema and the context prefix from the org id", () => {
  const { state } = load([
    "org:",
    `  id: ${ORG}`,
    "  name: Acme",
    "ivrs:",
    "  - { name: Main, extension: 3000 }",
  ]);
  assert.is(state!.org.context_prefix, `org_${ORG}_`);
  assert.is(state!.org.status, "active");
  assert.equal(state!.org.settings, { recording_enabled: true, max_concurrent_calls: 0 });
  assert.is(state!.ivrs[0]!.timeout, 10);
  assert.is(state!.ivrs[0]!.max_retries, 3);
  assert.is(state!.ivrs[0]!.greeting_language, "en-IN");
  assert.equal(state!.users, []);
});

test("orgs loaded together may not share an id, a context prefix or a DID", () => {
  const text = (name: string, prefix: string) =>
    [
      "org:",
      `  id: ${ORG}`,
      `  name: ${name}`,
      `  context_prefix: ${prefix}`,
      "dids:",
      "  - number: +918065978001",
      "",
    ].join("\n");
  const result = loadOrgSources(
    [
      { file: "orgs/a.yaml", text: text("A", "a_") },
      { file: "orgs/b.yaml", text: text("B", "a_") },
    ],
    {},
  );
  assert.equal(result.diagnostics.map(formatDiagnostic), [
    `orgs/b.yaml:2:7 org.id: org id ${ORG} is also used in orgs/a.yaml`,
    "orgs/b.yaml:4:19 org.context_prefix: context prefix a_ is also used in orgs/a.yaml",
    "orgs/b.yaml:6:13 dids[0].number: DID +918065978001 is also assigned in orgs/a.yaml",
  ]);
});

test.run();

test("orgs loaded together may not match one carrier address or overlapping ranges", () => {
  const text = (id: string, prefix: string, trunk: string) =>
    [
      "org:",
      `  id: ${id}`,
      `  name: ${prefix}`,
      `  context_prefix: ${prefix}`,
      "trunks:",
      trunk,
      "",
    ].join("\n");
  const result = loadOrgSources(
    [
      {
        file: "orgs/a.yaml",
        text: text(ORG, "a_", "  - { name: c, host: 203.0.113.10, match: [198.51.100.0/24] }"),
      },
      {
        file: "orgs/b.yaml",
        text: text(
          "bbbbbbbb-0000-4000-8000-000000000002",
          "b_",
          "  - { name: c, host: 203.0.113.10, match: [198.51.100.77, 192.0.2.1] }",
        ),
      },
    ],
    {},
  );
  assert.equal(result.diagnostics.map(formatDiagnostic), [
    "orgs/b.yaml:6:22 trunks[0].host: 203.0.113.10 is already matched by a trunk in orgs/a.yaml",
    "orgs/b.yaml:6:44 trunks[0].match[0]: 198.51.100.77 is already matched by a trunk in orgs/a.yaml",
  ]);
});

test("an alias bomb is one positioned error in words, never a bare ReferenceError", () => {
  const out = messages([
    "org:", // 1
    `  id: ${ORG}`, // 2
    "  name: Acme", // 3
    "x0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]", // 4
    "x1: &a1 [*a0, *a0, *a0, *a0, *a0, *a0, *a0, *a0, *a0]", // 5
    "x2: &a2 [*a1, *a1, *a1, *a1, *a1, *a1, *a1, *a1, *a1]", // 6
    "x3: &a3 [*a2, *a2, *a2, *a2, *a2, *a2, *a2, *a2, *a2]", // 7
    "x4: &a4 [*a3, *a3, *a3, *a3, *a3, *a3, *a3, *a3, *a3]", // 8
  ]);
  assert.is(out.length, 1, out.join("\n"));
  assert.match(out[0]!, /^orgs\/acme\.yaml:5:10: aliases \(\*name\) expand to too many nodes/);
  assert.not.match(out[0]!, "ReferenceError");
});

test("time_conditions: strict fields, hostile values and the schedule's own rules at file:line:col", () => {
  const out = messages([
    "org:", // 1
    `  id: ${ORG}`, // 2
    "  name: Acme", // 3
    "time_conditions:", // 4
    "  - name: office", // 5
    '    time_zone: "Europe/London,mon"', // 6
    "    colour: blue", // 7
    "    ranges:", // 8
    '      - { days: [mon, funday], start: "9:00", end: "17:00;x" }', // 9
    "    exceptions:", // 10
    '      - { start_date: "${SHELL(id)}" }', // 11
    "    open_destination_type: queue", // 12
    "    closed_destination_type: hangup", // 13
    "  - name: Bad)Name", // 14
    "    time_zone: Mars/Olympus", // 15
    "    ranges:", // 16
    '      - { days: [sat], start: "24:00", end: "10:00" }', // 17
    "    exceptions:", // 18
    '      - { start_date: "2026-02-30", end_date: "2026-01-01" }', // 19
    "    open_destination_type: extension", // 20
    '    open_destination: "4242"', // 21
    "    closed_destination_type: hangup", // 22
  ]);
  assert.equal(out, [
    "orgs/acme.yaml:6:16 time_conditions[0].time_zone: must be an IANA time zone name, such as Europe/London",
    'orgs/acme.yaml:7:5 time_conditions[0].colour: unknown field "colour"',
    "orgs/acme.yaml:9:23 time_conditions[0].ranges[0].days[1]: must be one of: mon, tue, wed, thu, fri, sat, sun",
    "orgs/acme.yaml:9:39 time_conditions[0].ranges[0].start: must be a time of day, HH:MM (00:00 to 24:00)",
    "orgs/acme.yaml:9:52 time_conditions[0].ranges[0].end: must be a time of day, HH:MM (00:00 to 24:00)",
    "orgs/acme.yaml:11:23 time_conditions[0].exceptions[0].start_date: must be a date, YYYY-MM-DD",
    "orgs/acme.yaml:14:11 time_conditions[1].name: must be lowercase letters, digits, _ and -, at most 28",
  ]);
  const semantic = messages([
    "org:",
    `  id: ${ORG}`,
    "  name: Acme",
    "time_conditions:", // 4
    "  - name: office", // 5
    "    time_zone: Mars/Olympus", // 6
    "    ranges:", // 7
    '      - { days: [sat], start: "24:00", end: "10:00" }', // 8
    "    exceptions:", // 9
    '      - { start_date: "2026-02-30", end_date: "2026-01-01" }', // 10
    "    open_destination_type: extension", // 11
    '    open_destination: "4242"', // 12
    "    closed_destination_type: hangup", // 13
  ]);
  assert.equal(semantic, [
    "orgs/acme.yaml:6:16 time_conditions[0].time_zone: unknown time zone Mars/Olympus (an IANA time zone name, such as Europe/London or Asia/Kolkata)",
    "orgs/acme.yaml:8:31 time_conditions[0].ranges[0].start: 24:00 can only end a range",
    "orgs/acme.yaml:10:23 time_conditions[0].exceptions[0].start_date: no such date 2026-02-30",
    "orgs/acme.yaml:10:47 time_conditions[0].exceptions[0].end_date: end_date is before start_date",
    "orgs/acme.yaml:12:23 time_conditions[0].open_destination: no user with extension 4242",
  ]);
});
