import { test } from "uvu";
import * as assert from "uvu/assert";
import type { Diagnostic } from "../../src/compiler/types.js";
import { validateOrg } from "../../src/model/validate.js";
import { makeState, type RawOrg } from "./org-fixture.js";

/** `path: message` of every diagnostic of the state `edit` makes (warnings marked). */
function problems(edit: (data: RawOrg) => void): string[] {
  return validateOrg(makeState(edit)).map(
    (d: Diagnostic) => `${d.severity === "warning" ? "warning " : ""}${d.path}: ${d.message}`,
  );
}

const option = (digit: string, action_type: string, action_destination?: string | null) => ({
  digit,
  action_type,
  action_destination: action_destination ?? null,
  description: "",
});

test("the fixture itself is valid", () => {
  assert.equal(
    problems(() => {}),
    [],
  );
});

test("menu digits: 0-9 * # only, one option per digit, at most 12", () => {
  assert.equal(
    problems((d) => {
      d.ivrs[0].options = [option("a", "hangup"), option("1", "hangup"), option("1", "hangup")];
    }),
    [
      "ivrs[0].options[0].digit: Invalid digit: a",
      "ivrs[0].options[2].digit: digit 1 is already used by options[1]",
    ],
  );
  assert.equal(
    problems((d) => {
      d.ivrs[0].options = [..."0123456789*#"].map((x) => option(x, "hangup"));
    }),
    [],
  );
  assert.equal(
    problems((d) => {
      d.ivrs[0].options = [..."0123456789*#", "0"].map((x) => option(x, "hangup"));
    }),
    [
      "ivrs[0].options: at most 12 options per IVR (one per digit), found 13",
      "ivrs[0].options[12].digit: digit 0 is already used by options[0]",
    ],
  );
});

test("action_type in the seven values; destination required except for hangup", () => {
  assert.equal(
    problems((d) => {
      d.ivrs[0].options = [option("1", "fax", "1001"), option("2", "queue"), option("3", "hangup")];
    }),
    [
      "ivrs[0].options[0].action_type: Invalid action_type: fax",
      "ivrs[0].options[1].action_destination: action_destination required for action_type=queue",
    ],
  );
});

test("option destinations must exist, each by its kind", () => {
  assert.equal(
    problems((d) => {
      d.ivrs.push({ name: "Sub", extension: "3100", status: "inactive" });
      d.ivrs[0].options = [
        option("1", "extension", "1009"),
        option("2", "queue", "2099"),
        option("3", "queue", "99999999-2222-4333-8444-555555555555"),
        option("4", "ivr", "3000"),
        option("5", "ivr", "3999"),
        option("6", "ai_agent", "1001"),
        option("7", "ai_agent", "1999"),
        option("8", "voicemail", "box"),
        option("9", "callback", "12345"),
        option("0", "ivr", "3100"),
      ];
    }),
    [
      "ivrs[0].options[0].action_destination: no user with extension 1009",
      "ivrs[0].options[1].action_destination: no queue with number 2099",
      "ivrs[0].options[2].action_destination: no queue with id 99999999-2222-4333-8444-555555555555",
      "ivrs[0].options[3].action_destination: an IVR option cannot go to its own IVR",
      "ivrs[0].options[4].action_destination: no IVR with extension 3999",
      "ivrs[0].options[5].action_destination: user 'Alice' (1001) is not an ai_agent user",
      "ivrs[0].options[6].action_destination: no user with extension 1999",
      "ivrs[0].options[7].action_destination: voicemail mailbox must be digits, got box",
      "ivrs[0].options[8].action_destination: Phone number 12345 does not look like a valid number (need 7-15 digits)",
      "warning ivrs[0].options[9].action_destination: IVR 'Sub' is inactive, so this option leads nowhere",
    ],
  );
});

test("references by id work for queues, IVRs and ai_agent users", () => {
  const state = makeState((d) => d.ivrs.push({ name: "Sub", extension: "3100" }));
  const bot = state.users[1];
  state.ivrs[0]!.options = [
    option("1", "queue", state.queues[0]!.id!),
    option("2", "ivr", state.ivrs[1]!.id!),
    option("3", "ai_agent", bot!.id!),
    option("4", "ai_agent", "1002"),
    option("5", "callback", "+919876543210"),
    option("6", "voicemail", "1001"),
  ];
  assert.equal(validateOrg(state), []);
});

test("extensions are unique across users, queues and IVRs with the specification's messages", () => {
  assert.equal(
    problems((d) => {
      d.users.push({ extension: "1001", name: "Alias", sip: { md5_cred: "0".repeat(32) } });
      d.queues.push({ number: "3000", name: "Clash" });
      d.ivrs.push({ name: "Other", extension: "2000" });
      d.ivrs.push({ name: "Again", extension: "3000" });
    }),
    [
      "users[2].extension: Extension 1001 is already assigned to user 'Alice'",
      // Users, then queues, then IVRs claim extensions: the later claimant is reported.
      "ivrs[0].extension: Extension 3000 is already used by queue 'Clash'",
      "ivrs[1].extension: Extension 2000 is already used by queue 'Sales'",
      "ivrs[2].extension: Extension 3000 is already used by queue 'Clash'",
    ],
  );
  assert.equal(
    problems((d) => {
      d.ivrs.push({ name: "Second", extension: "3100" });
      d.ivrs.push({ name: "Dup", extension: "3100" });
    }),
    ["ivrs[2].extension: Extension 3100 is already used by IVR 'Second'"],
  );
});

test("queue timeout destination pairs", () => {
  const withTimeout = (type: string, destination: string | null) =>
    problems((d) => {
      d.queues.push({ number: "2001", name: "Support" });
      d.queues[0].timeout_destination_type = type;
      d.queues[0].timeout_destination = destination;
    });
  assert.equal(withTimeout("none", "1001"), [
    "queues[0].timeout_destination: timeout_destination must be empty when timeout_destination_type is none",
  ]);
  assert.equal(withTimeout("none", null), []);
  assert.equal(withTimeout("user", "1001"), []);
  assert.equal(withTimeout("user", "1999"), [
    "queues[0].timeout_destination: no user with extension 1999",
  ]);
  assert.equal(withTimeout("user", null), [
    "queues[0].timeout_destination: timeout_destination required for timeout_destination_type=user",
  ]);
  assert.equal(withTimeout("queue", "2001"), []);
  assert.equal(withTimeout("queue", "2000"), [
    "queues[0].timeout_destination: a queue cannot time out into itself",
  ]);
  assert.equal(withTimeout("queue", "2999"), [
    "queues[0].timeout_destination: no queue with number 2999",
  ]);
  assert.equal(withTimeout("phone", "+919876543210"), []);
  assert.equal(withTimeout("phone", "12-34"), [
    "queues[0].timeout_destination: Phone number 12-34 does not look like a valid number (need 7-15 digits)",
  ]);
  assert.equal(withTimeout("phone", "1234567890123456"), [
    "queues[0].timeout_destination: Phone number 1234567890123456 does not look like a valid number (need 7-15 digits)",
  ]);
});

test("queue members are existing users, once per queue", () => {
  assert.equal(
    problems((d) => {
      d.queues[0].members = [{ extension: "1001" }, { extension: "1009" }, { extension: "1001" }];
    }),
    [
      "queues[0].members[1].extension: no user with extension 1009",
      "queues[0].members[2].extension: user 1001 is already a member of this queue",
    ],
  );
});

test("users: outbound_did, ring_target phone, SIP credential", () => {
  assert.equal(
    problems((d) => {
      d.dids.push({ number: "+918065978002", status: "inactive" });
      d.dids.push({ number: "+918065978003", pool_status: "pending" });
      d.users[0].outbound_did = "+918065978002";
      d.users[1].outbound_did = "+918065978003";
      d.users.push({ extension: "1003", name: "Mobile", ring_target: "phone" });
      d.users.push({ extension: "1004", name: "NoSecret", outbound_did: "+919999999999" });
      d.users.push({
        extension: "1005",
        name: "Local",
        outbound_did: "08065978001",
        sip: { md5_cred: "1".repeat(32) },
      });
    }),
    [
      "users[0].outbound_did: outbound_did +918065978002 is not an assigned, active DID of this org",
      "users[1].outbound_did: outbound_did +918065978003 is not an assigned, active DID of this org",
      "users[2].phone_number: phone_number required when ring_target is phone",
      "users[3].outbound_did: outbound_did +919999999999 is not an assigned, active DID of this org",
      "users[3].sip: SIP credential required: set sip.md5_cred or sip.password_env",
    ],
  );
});

test("DIDs: one default, never the sentinel, unique numbers, routing destinations exist", () => {
  assert.equal(
    problems((d) => {
      d.dids.push(
        { number: "08065978001", is_default: true },
        { number: "+918065978000" },
        { number: "+918065978004", routing_type: "extension", routing_destination: "1999" },
        { number: "+918065978005", routing_type: "queue", routing_destination: "2999" },
        { number: "+918065978006", routing_type: "ivr", routing_destination: "3999" },
        { number: "+918065978007", routing_type: "external", routing_destination: "abc" },
        { number: "+918065978008", routing_type: "queue" },
        { number: "+918065978009", routing_destination: "1001" },
      );
    }),
    [
      "dids[1].number: DID 08065978001 is already listed as dids[0]",
      "dids[1].is_default: at most one default DID per org (dids[0] is one)",
      "dids[2].number: +918065978000 is the reserved sentinel number and cannot belong to an org",
      "dids[3].routing_destination: no user with extension 1999",
      "dids[4].routing_destination: no queue with number 2999",
      "dids[5].routing_destination: no IVR with extension 3999",
      "dids[6].routing_destination: Phone number abc does not look like a valid number (need 7-15 digits)",
      "dids[7].routing_destination: routing_destination required for routing_type=queue",
      "dids[8].routing_type: routing_type required with a routing_destination",
    ],
  );
  const state = makeState((d) => {
    d.dids.push({ number: "+918065978002", routing_type: "queue", routing_destination: "2000" });
    d.dids.push({
      number: "+918065978003",
      routing_type: "external",
      routing_destination: "+14155550100",
    });
  });
  state.dids[0]!.routing_destination = state.ivrs[0]!.id!;
  assert.equal(validateOrg(state), []);
});

test("trunks and outbound routes", () => {
  assert.equal(
    problems((d) => {
      d.trunks.push({ name: "carrier", host: "other.example.net" });
      d.outbound_routes.push(
        { name: "Mobile", patterns: ["_9X.", "_X."], trunk: "nowhere" },
        {
          name: "Override",
          patterns: ["_8X."],
          trunk: "carrier",
          caller_id_override: "+14155550100",
        },
        {
          name: "Owned",
          patterns: ["_7X."],
          trunk: "carrier",
          caller_id_override: "+918065978029",
        },
      );
    }),
    [
      "trunks[1].name: trunk name carrier is already used by trunks[0]",
      "outbound_routes[1].trunk: no trunk named nowhere",
      "outbound_routes[1].patterns[1]: pattern _X. is already used by outbound route 'All'",
      "warning outbound_routes[2].caller_id_override: caller ID +14155550100 is outside the owned range and will be replaced by +918065978000",
    ],
  );
});

test.run();
