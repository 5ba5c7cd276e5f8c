// The wg-quick printer refuses anything but checked values (a config file format, like Asterisk's:
// no value may add a line, a section or a command), and the address rules behind the API's 400s.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { compileGateway } from "../../src/compiler/index.js";
import { gatewayStateFromOrgs } from "../../src/model/gateway.js";
import {
  hostRange,
  isIpv4,
  isIpv6,
  parseEndpoint,
  renderWgQuick,
  uriHost,
  type WgQuickConfig,
} from "../../src/model/wireguard.js";
import { makeState } from "./org-fixture.js";

const KEY = "gCeAoePkyDm72BbOyZFC2VTBO8r1emI6McujOcBMom4=";
const OTHER = "xj7oN/ds7H+Wxl+zc8mrCjjlpcztLjWEgetlcu0Bvh0=";

const config = (change: (c: WgQuickConfig) => void = () => {}): WgQuickConfig => {
  const c: WgQuickConfig = {
    comments: ["tunnel"],
    privateKey: KEY,
    addresses: ["10.99.0.1/30"],
    listenPort: 51820,
    peer: {
      publicKey: OTHER,
      presharedKey: OTHER,
      allowedIps: ["10.99.0.2/32"],
      endpoint: "vpn.example.com:51820",
      persistentKeepalive: 25,
    },
  };
  change(c);
  return c;
};

test("renders [Interface] and [Peer] with the given values", () => {
  assert.is(
    renderWgQuick(config()),
    [
      "# tunnel",
      "[Interface]",
      `PrivateKey = ${KEY}`,
      "Address = 10.99.0.1/30",
      "ListenPort = 51820",
      "",
      "[Peer]",
      `PublicKey = ${OTHER}`,
      `PresharedKey = ${OTHER}`,
      "AllowedIPs = 10.99.0.2/32",
      "Endpoint = vpn.example.com:51820",
      "PersistentKeepalive = 25",
      "",
    ].join("\n"),
  );
});

test("refuses every value that could add a line, a section or a command", () => {
  const refused: Array<(c: WgQuickConfig) => void> = [
    (c) => {
      c.comments = ["x\n[Peer]"];
    },
    (c) => {
      c.privateKey = `${KEY}\nPostUp = id`;
    },
    (c) => {
      c.addresses = ["10.99.0.1/30\nPostUp = id"];
    },
    (c) => {
      c.addresses = ["10.99.0.1/33"];
    },
    (c) => {
      c.peer.allowedIps = ["0.0.0.0/0, 10.0.0.0/8"];
    },
    (c) => {
      c.peer.endpoint = "vpn.example.com:51820\n[Interface]";
    },
    (c) => {
      c.peer.publicKey = "not a key";
    },
    (c) => {
      c.listenPort = 70000;
    },
  ];
  for (const change of refused) {
    assert.throws(() => renderWgQuick(config(change)), /refusing to print|bad port/);
  }
});

test("address rules", () => {
  for (const ok of ["0.0.0.0", "10.99.0.2", "255.255.255.255"]) assert.ok(isIpv4(ok), ok);
  for (const bad of ["10.99.0", "10.99.0.256", "010.1.1.1", "1.2.3.4.5"]) {
    assert.not.ok(isIpv4(bad), bad);
  }
  for (const ok of ["::", "::1", "fd00:99::2", "1:2:3:4:5:6:7:8", "::ffff:10.0.0.1"]) {
    assert.ok(isIpv6(ok), ok);
  }
  for (const bad of ["1:2:3:4:5:6:7:8:9", "fd00:::1", "1::2::3", "12345::", "::ffff:10.0.0.256"]) {
    assert.not.ok(isIpv6(bad), bad);
  }
  assert.is(uriHost("fd00:99::2/64"), "[fd00:99::2]");
  assert.is(hostRange("fd00:99::2/64"), "fd00:99::2/128");
  assert.is(hostRange("10.99.0.2/30"), "10.99.0.2/32");
  assert.is(parseEndpoint("vpn.example.com:0"), undefined);
});

test("the compiler refuses a staging tunnel host that is not an address (a diagnostic)", () => {
  const org = makeState((d) => {
    d.dids = [{ number: "+918065978009", routing_environment: "staging" }];
  });
  const state = gatewayStateFromOrgs([org], {
    environment: "prod",
    staging_endpoint: "staging-tunnel",
    staging_tunnels: { [org.org.id]: { host: "evil.example.com,60)", port: 5060 } },
  });
  const result = compileGateway(state);
  assert.ok(
    result.diagnostics.some(
      (d) => d.severity === "error" && d.message.includes("is not an IP address and port"),
    ),
  );
  const text = result.files.map((f) => f.content).join("");
  assert.not.ok(text.includes("evil"));
  assert.ok(text.includes("Dial(PJSIP/${EXTEN}@staging-tunnel,120)"));
});

test.run();
