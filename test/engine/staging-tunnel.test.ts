// The staging dispatch over an org's customer tunnel in a real Asterisk 22 (SPEC.md §4.5): a call
// to the org's staging DID arriving at the gateway is sent, with the staging endpoint's settings,
// to the address at the customer's end of the tunnel, and not to the endpoint's own host.
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { compileAll } from "../../src/compiler/index.js";
import { GATEWAY_CONTEXT } from "../../src/compiler/names.js";
import { freeLoopbackPort } from "../../src/engine/testing/asterisk-instance.js";
import { loadOrgSources } from "../../src/model/files.js";
import { FakeCarrier } from "./carrier.js";
import { withEngine } from "./helpers.js";

const A = "aaaaaaaa-0000-4000-8000-000000000001";
const P = `org_${A}_`;
const MD5 = "5f4dcc3b5aa765d61d8327deb882cf99";

const test = suite("staging tunnel");

test("a staging DID is dialled to the customer end of the org's staging tunnel", async () => {
  const endpointHost = new FakeCarrier();
  const tunnelEnd = new FakeCarrier();
  const endpointPort = await freeLoopbackPort();
  const tunnelPort = await freeLoopbackPort();
  await endpointHost.listen(endpointPort);
  await tunnelEnd.listen(tunnelPort);
  try {
    const yaml = `
org: { id: ${A}, name: Acme, context_prefix: ${P} }
users: [ { extension: "101", name: Alice, sip: { md5_cred: ${MD5} } } ]
trunks: [ { name: staging, host: 127.0.0.1, port: ${endpointPort} } ]
dids:
  - { number: "+918065978001" }
  - { number: "+918065978002", routing_type: extension, routing_destination: "101", routing_environment: staging }
`;
    const loaded = loadOrgSources([{ file: "acme.yaml", text: yaml }], {});
    const errors = loaded.diagnostics.filter((d) => d.severity === "error");
    assert.equal(errors, []);
    // The staging endpoint's settings (here: a trunk endpoint of the org), the tunnel's address.
    const compiled = compileAll(
      loaded.orgs.map((o) => o.state),
      {
        environment: "prod",
        staging_endpoint: `${P}trunk_staging`,
        staging_tunnels: { [A]: { host: "127.0.0.1", port: tunnelPort } },
      },
    );
    assert.equal(compiled.diagnostics, []);
    await withEngine(
      compiled.files,
      async (engine) => {
        await engine.cli(
          `channel originate Local/+918065978002@${GATEWAY_CONTEXT} extension s@pbxtest-wait`,
        );
        const invite = await tunnelEnd.invite(1);
        assert.is(invite.number, "+918065978002");
        assert.match(
          invite.raw,
          new RegExp(`^INVITE sip:\\+918065978002@127\\.0\\.0\\.1:${tunnelPort}`),
        );
        assert.is(endpointHost.invites.length, 0, "nothing went to the endpoint's own host");
        assert.not.match(engine.log(), /WARNING|ERROR/);
      },
      {
        etcFiles: { "extensions_test.conf": "[pbxtest-wait]\nexten => s,1,Wait(5)\n" },
        extensionsAppend: '#include "extensions_test.conf"',
      },
    );
  } finally {
    await endpointHost.close();
    await tunnelEnd.close();
  }
});

test.run();
