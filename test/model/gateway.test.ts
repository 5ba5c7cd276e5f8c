import { test } from "uvu";
import * as assert from "uvu/assert";
import { gatewayStateFromOrgs } from "../../src/model/gateway.js";
import { makeState } from "./org-fixture.js";

const options = { environment: "prod" as const, staging_endpoint: "staging-tunnel" };

test("assigned, active DIDs of active orgs, sorted by context prefix and number", () => {
  const b = makeState((d) => {
    d.org.id = "22222222-2222-4333-8444-555555555555";
    d.org.context_prefix = "b_";
    d.dids = [
      { number: "+918065978009", routing_environment: "staging" },
      { number: "08065978002" },
      { number: "+918065978005", status: "inactive" },
      { number: "+918065978006", pool_status: "pending" },
    ];
  });
  const a = makeState((d) => {
    d.org.context_prefix = "a_";
  });
  const suspended = makeState((d) => {
    d.org.id = "33333333-2222-4333-8444-555555555555";
    d.org.context_prefix = "c_";
    d.org.status = "suspended";
  });
  const noDids = makeState((d) => {
    d.org.id = "44444444-2222-4333-8444-555555555555";
    d.org.context_prefix = "d_";
    d.dids = [];
  });
  const expected = {
    environment: "prod",
    staging_endpoint: "staging-tunnel",
    orgs: [
      {
        org_id: a.org.id,
        context_prefix: "a_",
        dids: [{ number: "+918065978001", routing_environment: "prod" }],
      },
      {
        org_id: b.org.id,
        context_prefix: "b_",
        dids: [
          { number: "08065978002", routing_environment: "prod" },
          { number: "+918065978009", routing_environment: "staging" },
        ],
      },
    ],
  };
  assert.equal(gatewayStateFromOrgs([b, suspended, a, noDids], options), expected);
  assert.equal(gatewayStateFromOrgs([noDids, a, suspended, b], options), expected);
});

test.run();
