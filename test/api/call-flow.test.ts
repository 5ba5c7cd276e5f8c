// Call-flow questions over the API: POST /simulate walks the caller's own stored org, with org
// credentials only, and answers with the steps of the generated dialplan; GET /call-flow.svg
// draws the org's call graph.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { expectError, startTestApp, type TestApp } from "./helpers.js";
import { newOrg, seedDid, seedIvr, type TestOrg } from "./users-helpers.js";

let app: TestApp;
let acme: TestOrg;
let other: TestOrg;

test.before(async () => {
  app = await startTestApp();
  acme = await newOrg(app, "Acme");
  other = await newOrg(app, "Other");
  const res = await app.request("POST", "/api/v1/users", {
    headers: acme.headers,
    body: { extension: "4001", name: "Alice" },
  });
  assert.is(res.status, 201, res.text);
  const ivr = await seedIvr(app, acme.id, "Main", "4500", [
    { digit: "1", action_type: "extension", action_destination: "4001", description: "" },
  ]);
  await seedDid(app, acme.id, "+918065978011", { routing_type: "ivr", routing_destination: ivr });
});
test.after(async () => {
  await app.close();
});

test("POST /simulate walks the org's DID -> IVR -> option -> user, naming each context", async () => {
  const res = await app.request("POST", "/api/v1/simulate", {
    headers: acme.headers,
    body: { did: "08065978011", digits: ["1"] },
  });
  assert.is(res.status, 200, res.text);
  assert.equal(res.body.path, ["ivr Main", "user 4001"]);
  const places = res.body.steps.map(
    (s: { context: string; exten: string }) =>
      `${s.context.replace(/^org_[0-9a-f-]+_/, "")},${s.exten}`,
  );
  assert.equal(places, [
    "incoming,08065978011",
    "incoming,+918065978011",
    "ivr,4500",
    "ivrm_4500,s",
    "ivrm_4500,1",
    "internal,4001",
    "dial,4001",
  ]);
  assert.match(res.body.outcome, /answered by Alice \(4001\)/);
});

test('POST /simulate takes the digits as the CLI does, "1" or "1,3", with the same walk', async () => {
  const asArray = await app.request("POST", "/api/v1/simulate", {
    headers: acme.headers,
    body: { did: "08065978011", digits: ["1"] },
  });
  const asText = await app.request("POST", "/api/v1/simulate", {
    headers: acme.headers,
    body: { did: "08065978011", digits: "1" },
  });
  assert.is(asText.status, 200, asText.text);
  assert.equal(asText.body, asArray.body);
  const waits = await app.request("POST", "/api/v1/simulate", {
    headers: acme.headers,
    body: { did: "08065978011", digits: ",1" },
  });
  assert.is(waits.status, 200, waits.text);
  const bad = await app.request("POST", "/api/v1/simulate", {
    headers: acme.headers,
    body: { did: "08065978011", digits: "1;3" },
  });
  // The text form's own problem, not "must be array".
  expectError(
    bad,
    400,
    'digits must be the keys of each prompt separated by commas ("1,3"): at most 15 digits, * or # per prompt, at most 50 prompts',
  );
});

test("POST /simulate sees only the caller's org: another org's DID does not reach it", async () => {
  const res = await app.request("POST", "/api/v1/simulate", {
    headers: other.headers,
    body: { did: "+918065978011" },
  });
  assert.is(res.status, 200, res.text);
  assert.equal(res.body.path, []);
  assert.match(res.body.outcome, /does not reach Other/);
});

test("POST /simulate needs org credentials and a well-formed number", async () => {
  const anonymous = await app.request("POST", "/api/v1/simulate", {
    body: { did: "+918065978011" },
  });
  assert.is(anonymous.status, 401, anonymous.text);
  const bad = await app.request("POST", "/api/v1/simulate", {
    headers: acme.headers,
    body: { did: "not a number" },
  });
  assert.is(bad.status, 400, bad.text);
});

test("POST /simulate takes the time of the call (default: the server's clock) for time conditions", async () => {
  const tc = await app.request("POST", "/api/v1/time-conditions", {
    headers: acme.headers,
    body: {
      name: "office",
      time_zone: "Europe/London",
      ranges: [{ days: ["mon", "tue", "wed", "thu", "fri"], start: "09:00", end: "17:00" }],
      open_destination_type: "extension",
      open_destination: "4001",
      closed_destination_type: "hangup",
    },
  });
  assert.is(tc.status, 201, tc.text);
  await seedDid(app, acme.id, "+918065978012", {
    routing_type: "time_condition",
    routing_destination: "office",
  });
  const at = async (when?: string) => {
    const res = await app.request("POST", "/api/v1/simulate", {
      headers: acme.headers,
      body: { did: "+918065978012", ...(when ? { at: when } : {}) },
    });
    assert.is(res.status, 200, res.text);
    return res.body.path as string[];
  };
  // 08:30 UTC: before opening in GMT (27 March), 09:30 in BST (30 March, after the change).
  assert.equal(await at("2026-03-27T08:30:00Z"), ["time_condition office", "hangup"]);
  assert.equal(await at("2026-03-30T08:30:00Z"), ["time_condition office", "user 4001"]);
  assert.equal(await at("2026-03-30T10:30:00+02:00"), ["time_condition office", "user 4001"]);
  app.clock.now = new Date("2026-03-28T12:00:00Z"); // a Saturday
  assert.equal(await at(), ["time_condition office", "hangup"]);
  app.clock.now = new Date("2026-03-31T12:00:00Z");
  assert.equal(await at(), ["time_condition office", "user 4001"]);
  for (const bad of ["2026-03-27", "2026-03-27T08:30:00", "2026-02-30T08:30:00Z", "now"]) {
    const res = await app.request("POST", "/api/v1/simulate", {
      headers: acme.headers,
      body: { did: "+918065978012", at: bad },
    });
    assert.is(res.status, 400, `${bad}: ${res.text}`);
  }
});

test("GET /call-flow.svg draws the caller's org: DID -> IVR -> option -> user, as SVG", async () => {
  const res = await app.request("GET", "/api/v1/call-flow.svg", { headers: acme.headers });
  assert.is(res.status, 200, res.text);
  assert.match(res.headers.get("content-type") ?? "", "image/svg+xml");
  assert.match(res.text, /^<\?xml/);
  for (const id of ["did_918065978011", "ivr_4500", "user_4001"]) {
    assert.match(res.text, `<title>${id}</title>`);
  }
  assert.match(res.text, "<title>ivr_4500&#45;&gt;user_4001</title>");
  const anonymous = await app.request("GET", "/api/v1/call-flow.svg");
  assert.is(anonymous.status, 401);
});

test.run();
