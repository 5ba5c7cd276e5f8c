// SPEC.md §4.5 caller ID rules 1-6 and the phone-number forms behind them.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { resolveCallerId, resolveUserCallerId } from "../../src/model/caller-id.js";
import type { Did, OrgState, User } from "../../src/model/org-state.js";
import {
  didAliases,
  gatewayRangeCheck,
  internationalDigits,
  SENTINEL_DID,
  toE164,
} from "../../src/model/phone.js";

const did = (number: string, extra: Partial<Did> = {}): Did => ({
  number,
  status: "active",
  pool_status: "assigned",
  is_default: false,
  routing_type: null,
  routing_destination: null,
  routing_environment: "prod",
  ...extra,
});

const user = (outbound_did: string | null): User => ({
  extension: "101",
  name: "A",
  routing_type: "human",
  status: "active",
  ring_target: "ext",
  phone_number: null,
  ring_time: 30,
  outbound_did,
  call_recording: true,
});

const org = (dids: Did[]): OrgState => ({
  org: {
    id: "aaaaaaaa-0000-4000-8000-000000000001",
    name: "A",
    context_prefix: "org_a_",
    status: "active",
    settings: { recording_enabled: true, max_concurrent_calls: 0 },
  },
  users: [],
  queues: [],
  ivrs: [],
  dids,
  trunks: [],
  outbound_routes: [],
  time_conditions: [],
});

test("the gateway range check passes 91806597 + 8000..8029 and nothing else", () => {
  assert.is(gatewayRangeCheck("+918065978000"), "+918065978000");
  assert.is(gatewayRangeCheck("08065978029"), "+918065978029");
  assert.is(gatewayRangeCheck("918065978015"), "+918065978015");
  assert.is(gatewayRangeCheck("+918065978030"), SENTINEL_DID);
  assert.is(gatewayRangeCheck("+918065977999"), SENTINEL_DID);
  assert.is(gatewayRangeCheck("+14155550100"), SENTINEL_DID);
  assert.is(
    gatewayRangeCheck("+91 (806) 597-8003"),
    "+918065978003",
    "non-digits are filtered first",
  );
  assert.is(gatewayRangeCheck(""), SENTINEL_DID);
});

test("numbers normalise to E.164 and Indian numbers get three aliases", () => {
  assert.is(toE164("080 6597 8001"), "+918065978001");
  assert.is(internationalDigits("+1 415 555 0100"), "14155550100");
  assert.equal(didAliases("+918065978001"), ["08065978001", "918065978001", "+918065978001"]);
  assert.equal(didAliases("08065978001"), ["08065978001", "918065978001", "+918065978001"]);
  assert.equal(didAliases("+14155550100"), ["14155550100", "+14155550100"]);
  assert.equal(didAliases("4155550100"), ["4155550100"]);
});

test("rule 2: the user's outbound_did wins when it is an assigned, active DID of the org", () => {
  const state = org([did("+918065978001", { is_default: true }), did("+918065978002")]);
  assert.equal(resolveUserCallerId(state, user("+918065978002")), {
    number: "+918065978002",
    source: "user_outbound_did",
    chosen: "+918065978002",
  });
  const inactive = org([
    did("+918065978001", { is_default: true }),
    did("+918065978002", { status: "inactive" }),
  ]);
  assert.is(resolveUserCallerId(inactive, user("+918065978002")).source, "org_default_did");
});

test("rules 3-4: the org default, else the first usable DID by number ascending", () => {
  assert.is(
    resolveUserCallerId(
      org([did("+918065978009"), did("+918065978004", { is_default: true })]),
      null,
    ).number,
    "+918065978004",
  );
  const noDefault = org([
    did("+918065978009"),
    did("+918065978003", { pool_status: "pending" }),
    did("+918065978005"),
  ]);
  assert.equal(resolveUserCallerId(noDefault, null), {
    number: "+918065978005",
    source: "first_assigned_did",
    chosen: "+918065978005",
  });
});

test("rule 5: no DID, or a DID outside the owned range, gives the sentinel", () => {
  assert.equal(resolveUserCallerId(org([]), null), {
    number: SENTINEL_DID,
    source: "none",
    chosen: null,
  });
  assert.is(
    resolveUserCallerId(org([did("+14155550100", { is_default: true })]), null).number,
    SENTINEL_DID,
  );
});

test("rule 1: a request caller_id must be an assigned, active DID of the org, sent as E.164", () => {
  const state = org([
    did("08065978003"),
    did("+918065978004", { is_default: true }),
    did("+918065978005", { status: "inactive" }),
    did("+918065978006", { pool_status: "reserved" }),
  ]);
  // Written any way the client likes: non-digits dropped, local form made international.
  assert.equal(resolveCallerId(state, { callerId: "+91 80659-78003", user: user(null) }), {
    number: "+918065978003",
    source: "request",
    chosen: "+918065978003",
  });
  assert.equal(resolveCallerId(state, { callerId: "08065978003", user: null }), {
    number: "+918065978003",
    source: "request",
    chosen: "+918065978003",
  });
  for (const callerId of ["+918065978005", "+918065978006", "+918065978009", "", "abc"]) {
    assert.equal(
      resolveCallerId(state, { callerId, user: user("+918065978004") }),
      { refused: "caller_id_not_assigned" },
      callerId,
    );
  }
  // Without one, rules 2-5 exactly as the compiled dialplan applies them.
  assert.equal(
    resolveCallerId(state, { user: user("+918065978003") }),
    resolveUserCallerId(state, user("+918065978003")),
  );
});

test("rule 1 then still passes the gateway range check (rule 5)", () => {
  const state = org([did("+14155550100")]);
  assert.equal(resolveCallerId(state, { callerId: "+1 415 555 0100", user: null }), {
    number: SENTINEL_DID,
    source: "request",
    chosen: "+14155550100",
  });
});

test("rule 6: AI originate with no caller_id and no usable DID is refused", () => {
  const none = org([did("+918065978007", { status: "inactive" })]);
  assert.equal(resolveCallerId(none, { user: null, requireDid: true }), {
    refused: "no_caller_id_available",
  });
  // Other calls still get the sentinel (rule 5), and a DID lets AI originate through.
  assert.equal(resolveCallerId(none, { user: null }), {
    number: SENTINEL_DID,
    source: "none",
    chosen: null,
  });
  assert.equal(resolveCallerId(org([did("+918065978007")]), { user: null, requireDid: true }), {
    number: "+918065978007",
    source: "first_assigned_did",
    chosen: "+918065978007",
  });
});

test.run();
