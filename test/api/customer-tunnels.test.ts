// Customer tunnels on the real app: admin and org views, keys (X25519, private keys only in the
// config of their own end), validation of addresses, ranges and endpoints (no line or section
// can be injected into the wg-quick file), status from `wg show`, the staging tunnel reaching the
// gateway dispatch, and `wg-quick strip` accepting both rendered files.
import { execFileSync, spawnSync } from "node:child_process";
import { createPrivateKey, createPublicKey } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { compileGateway } from "../../src/compiler/index.js";
import { tunnelStatus, type WgShow } from "../../src/domain/orgs/customer-tunnels.js";
import { parseCidr, parseEndpoint, parseWgDump } from "../../src/model/wireguard.js";
import { loadGatewayState } from "../../src/store/load-gateway-state.js";
import { addToPool, adminHeaders, assignFromPool, orgKey } from "./dids-fixtures.js";
import { expectError, startTestApp, type TestApp } from "./helpers.js";

/** The public key of a WireGuard private key (base64 of raw X25519 keys), by node:crypto. */
function publicKeyOf(privateKey: string): string {
  const der = Buffer.concat([
    Buffer.from("302e020100300506032b656e04220420", "hex"),
    Buffer.from(privateKey, "base64"),
  ]);
  const key = createPublicKey(createPrivateKey({ key: der, format: "der", type: "pkcs8" }));
  return Buffer.from(key.export({ format: "jwk" }).x!, "base64url").toString("base64");
}

function field(config: string, section: "Interface" | "Peer", name: string): string | undefined {
  const body = config.split(/^\[/m).find((part) => part.startsWith(`${section}]`)) ?? "";
  return new RegExp(`^${name} = (.*)$`, "m").exec(body)?.[1];
}

const BASE = {
  name: "Acme HQ",
  gateway_address: "10.99.0.1/30",
  customer_address: "10.99.0.2/30",
  gateway_endpoint: "pbx.example.com:51820",
  customer_networks: ["192.168.10.0/24"],
};

async function setup() {
  const app = await startTestApp();
  const acme = await app.createOrg("Acme");
  const other = await app.createOrg("Other");
  const admin = await adminHeaders(app);
  return { app, acme, other, admin };
}

async function create(app: TestApp, admin: Record<string, string>, body: unknown) {
  const res = await app.request("POST", "/api/v1/admin/customer-tunnels", {
    headers: admin,
    body,
  });
  assert.is(res.status, 201, res.text);
  return res.body;
}

test("admin creates; keys are X25519 pairs; each end's file holds only its own private key", async () => {
  const { app, acme, other, admin } = await setup();
  try {
    const tunnel = await create(app, admin, { ...BASE, org_id: acme.id });
    assert.is(tunnel.interface, `wgc-${tunnel.id.slice(0, 8)}`);
    assert.is(tunnel.listen_port, 51820);
    assert.is(tunnel.keepalive, 25);
    assert.is(tunnel.staging, false);
    assert.not.ok(JSON.stringify(tunnel).toLowerCase().includes("private"));
    assert.not.equal(tunnel.gateway_public_key, tunnel.customer_public_key);
    // The sealed columns hold no key in clear.
    const stored = await app.db
      .selectFrom("customer_tunnels")
      .selectAll()
      .where("id", "=", tunnel.id)
      .executeTakeFirstOrThrow();
    assert.match(stored.customer_private_key, /^v1\./);

    const customer = await app.request("GET", `/api/v1/customer-tunnels/${tunnel.id}/config`, {
      headers: orgKey(acme),
    });
    assert.is(customer.status, 200, customer.text);
    assert.match(customer.headers.get("content-type") ?? "", /^text\/plain/);
    assert.is(customer.headers.get("content-disposition"), 'attachment; filename="wg0.conf"');
    const customerKey = field(customer.text, "Interface", "PrivateKey")!;
    assert.is(publicKeyOf(customerKey), tunnel.customer_public_key);
    assert.is(field(customer.text, "Interface", "Address"), "10.99.0.2/30");
    assert.is(field(customer.text, "Interface", "ListenPort"), undefined);
    assert.is(field(customer.text, "Peer", "PublicKey"), tunnel.gateway_public_key);
    assert.is(field(customer.text, "Peer", "AllowedIPs"), "10.99.0.1/32");
    assert.is(field(customer.text, "Peer", "Endpoint"), "pbx.example.com:51820");
    assert.is(field(customer.text, "Peer", "PersistentKeepalive"), "25");

    // The file holds a private key: no `ak_` key may fetch it, whatever its permissions.
    const key = await app.request("POST", "/api/v1/api-keys", {
      headers: orgKey(acme),
      body: { name: "all", permissions: ["calls.read", "crm.read", "crm.write", "crm.customize"] },
    });
    expectError(
      await app.request("GET", `/api/v1/customer-tunnels/${tunnel.id}/config`, {
        headers: { "x-api-key": key.body.api_key },
      }),
      403,
      "API key lacks permission: org.manage",
    );
    const listedByKey = await app.request("GET", "/api/v1/customer-tunnels", {
      headers: { "x-api-key": key.body.api_key },
    });
    assert.is(listedByKey.body.total, 1);
    expectError(
      await app.request("GET", `/api/v1/customer-tunnels/${tunnel.id}/config?side=gateway`, {
        headers: orgKey(acme),
      }),
      403,
      "Only an admin may download the gateway side of a tunnel",
    );
    const gateway = await app.request(
      "GET",
      `/api/v1/admin/customer-tunnels/${tunnel.id}/config?side=gateway`,
      { headers: admin },
    );
    assert.is(gateway.status, 200, gateway.text);
    assert.is(
      gateway.headers.get("content-disposition"),
      `attachment; filename="${tunnel.interface}.conf"`,
    );
    const gatewayKey = field(gateway.text, "Interface", "PrivateKey")!;
    assert.is(publicKeyOf(gatewayKey), tunnel.gateway_public_key);
    assert.not.ok(gateway.text.includes(customerKey), "the gateway's file has no customer key");
    assert.not.ok(customer.text.includes(gatewayKey), "the customer's file has no gateway key");
    assert.is(field(gateway.text, "Interface", "ListenPort"), "51820");
    assert.is(field(gateway.text, "Peer", "AllowedIPs"), "10.99.0.2/32, 192.168.10.0/24");
    assert.is(field(gateway.text, "Peer", "Endpoint"), undefined);
    assert.is(
      field(gateway.text, "Peer", "PresharedKey"),
      field(customer.text, "Peer", "PresharedKey"),
    );

    // Views: the org sees its own; another org gets 403; admins see all or one org's.
    const own = await app.request("GET", "/api/v1/customer-tunnels", { headers: orgKey(acme) });
    assert.equal(
      own.body.data.map((t: { id: string }) => t.id),
      [tunnel.id],
    );
    const theirs = await app.request("GET", "/api/v1/customer-tunnels", { headers: orgKey(other) });
    assert.equal(theirs.body.data, []);
    for (const path of [
      `/customer-tunnels/${tunnel.id}`,
      `/customer-tunnels/${tunnel.id}/config`,
    ]) {
      expectError(
        await app.request("GET", `/api/v1${path}`, { headers: orgKey(other) }),
        403,
        "Access denied",
      );
    }
    await create(app, admin, {
      ...BASE,
      org_id: other.id,
      gateway_address: "10.99.1.1/30",
      customer_address: "10.99.1.2/30",
    });
    const all = await app.request("GET", "/api/v1/admin/customer-tunnels", { headers: admin });
    assert.is(all.body.total, 2);
    assert.equal(
      all.body.data.map((t: { listen_port: number }) => t.listen_port).sort(),
      [51820, 51821],
    );
    const one = await app.request("GET", `/api/v1/admin/customer-tunnels?org_id=${acme.id}`, {
      headers: admin,
    });
    assert.is(one.body.total, 1);

    const got = await app.request("GET", `/api/v1/customer-tunnels/${tunnel.id}`, {
      headers: orgKey(acme),
    });
    assert.is(got.status, 200, got.text);
    // No such interface on this machine: `down` when `wg` can say so, else `unknown`.
    assert.ok(["down", "unknown"].includes(got.body.status), got.body.status);

    // Org credentials cannot manage tunnels; admin tokens cannot use the org view.
    const refused = await app.request("POST", "/api/v1/admin/customer-tunnels", {
      headers: orgKey(acme),
      body: { ...BASE, org_id: acme.id },
    });
    assert.is(refused.status, 403);
    const adminOnOrg = await app.request("GET", "/api/v1/customer-tunnels", { headers: admin });
    assert.is(adminOnOrg.status, 403);

    assert.is(
      (
        await app.request("DELETE", `/api/v1/admin/customer-tunnels/${tunnel.id}`, {
          headers: admin,
        })
      ).status,
      204,
    );
    expectError(
      await app.request("GET", `/api/v1/customer-tunnels/${tunnel.id}`, { headers: orgKey(acme) }),
      404,
      "Tunnel not found",
    );
  } finally {
    await app.close();
  }
});

test("addresses, ranges and endpoints are checked; nothing can add a line to the file", async () => {
  const { app, acme, admin } = await setup();
  try {
    const attempt = (body: Record<string, unknown>) =>
      app.request("POST", "/api/v1/admin/customer-tunnels", {
        headers: admin,
        body: { ...BASE, org_id: acme.id, ...body },
      });
    const refusedWith = async (body: Record<string, unknown>, text: string) => {
      const res = await attempt(body);
      assert.is(res.status, 400, `${JSON.stringify(body)}: ${res.text}`);
      assert.match(res.body.error, text);
    };
    await refusedWith({ gateway_endpoint: "pbx.example.com:51820\n[Peer]" }, "must be host:port");
    await refusedWith({ gateway_endpoint: "pbx.example.com:99999" }, "port of 1-65535");
    await refusedWith({ customer_endpoint: "[zz::1]:51820" }, "customer_endpoint");
    await refusedWith({ gateway_address: "10.99.0.1/30\nPostUp = rm -rf /" }, "prefix length");
    await refusedWith({ gateway_address: "10.99.0.300/30" }, "is not an address with a prefix");
    await refusedWith({ customer_address: "10.99.0.2/33" }, "is not an address with a prefix");
    await refusedWith({ customer_address: "fd00::2/64" }, "both be IPv4 or both IPv6");
    await refusedWith({ customer_address: "10.99.0.1/30" }, "must be different addresses");
    await refusedWith({ customer_networks: ["192.168.10.0/24", "192.168.1.0"] }, "prefix length");
    await refusedWith({ customer_networks: ["1:2:3:4:5:6:7:8:9/64"] }, "customer_networks[0]");
    await refusedWith({ interface: "wg0; reboot" }, "must be an interface name");
    await refusedWith({ name: "HQ\n[Interface]" }, "must be on one line");
    expectError(
      await attempt({ org_id: "00000000-0000-4000-8000-000000000000" }),
      404,
      "Organization not found",
    );

    const v6 = await create(app, admin, {
      ...BASE,
      org_id: acme.id,
      interface: "wg-acme",
      gateway_address: "fd00:99::1/64",
      customer_address: "fd00:99::2/64",
      customer_endpoint: "[2001:db8::7]:51820",
      customer_networks: ["2001:db8:10::/48"],
      keepalive: 0,
    });
    expectError(
      await attempt({ interface: "wg-acme" }),
      409,
      "Interface wg-acme is already used by another tunnel",
    );
    expectError(
      await attempt({ listen_port: v6.listen_port }),
      409,
      `Listen port ${v6.listen_port} is already used by another tunnel`,
    );
    const gateway = await app.request(
      "GET",
      `/api/v1/admin/customer-tunnels/${v6.id}/config?side=gateway`,
      { headers: admin },
    );
    assert.is(field(gateway.text, "Peer", "AllowedIPs"), "fd00:99::2/128, 2001:db8:10::/48");
    assert.is(field(gateway.text, "Peer", "Endpoint"), "[2001:db8::7]:51820");
    const customer = await app.request("GET", `/api/v1/customer-tunnels/${v6.id}/config`, {
      headers: orgKey(acme),
    });
    assert.is(field(customer.text, "Peer", "PersistentKeepalive"), undefined);
    // Each file: two sections, every line a comment, a section or a key = value.
    for (const text of [gateway.text, customer.text]) {
      const lines = text.split("\n").filter((l) => l !== "");
      assert.equal(
        lines.filter((l) => l.startsWith("[")),
        ["[Interface]", "[Peer]"],
      );
      assert.ok(lines.every((l) => /^(#.*|\[(Interface|Peer)\]|[A-Za-z]+ = \S.*)$/.test(l)));
    }
  } finally {
    await app.close();
  }
});

test("the org's staging tunnel: one per org, in the gateway dispatch, schedules a deploy", async () => {
  const { app, acme, admin } = await setup();
  try {
    const did = await addToPool(app, "+918065978005");
    await assignFromPool(app, acme, did.id);
    await app.db
      .updateTable("dids")
      .set({ routing_environment: "staging" })
      .where("id", "=", did.id)
      .execute();
    const first = await create(app, admin, { ...BASE, org_id: acme.id, staging: true });
    const second = await create(app, admin, {
      ...BASE,
      org_id: acme.id,
      gateway_address: "10.99.2.1/30",
      customer_address: "10.99.2.2/30",
      staging_sip_port: 5080,
    });
    const options = { environment: "prod" as const, staging_endpoint: "staging-tunnel" };
    const dialOf = async () => {
      const files = compileGateway(await loadGatewayState(app.db, options)).files;
      const text = files.map((f) => f.content).join("\n");
      return /exten => \+918065978005,1,(.*)$/m.exec(text)?.[1];
    };
    assert.is(await dialOf(), "Dial(PJSIP/staging-tunnel/sip:${EXTEN}@10.99.0.2:5060,120)");

    app.deploys.length = 0;
    const moved = await app.request("PUT", `/api/v1/admin/customer-tunnels/${second.id}`, {
      headers: admin,
      body: { staging: true },
    });
    assert.is(moved.status, 200, moved.text);
    assert.equal(app.deploys, [acme.id]);
    const before = await app.request("GET", `/api/v1/admin/customer-tunnels/${first.id}`, {
      headers: admin,
    });
    assert.is(before.body.staging, false, "marking one clears the org's other staging tunnel");
    assert.is(await dialOf(), "Dial(PJSIP/staging-tunnel/sip:${EXTEN}@10.99.2.2:5080,120)");

    await app.request("DELETE", `/api/v1/admin/customer-tunnels/${second.id}`, { headers: admin });
    assert.is(await dialOf(), "Dial(PJSIP/${EXTEN}@staging-tunnel,120)");
  } finally {
    await app.close();
  }
});

test("status from `wg show <iface> dump`; the dump parser", async () => {
  const row = { interface: "wgc-1", customer_public_key: "CUSTOMERKEY" };
  const now = new Date("2026-03-01T12:00:00Z");
  const nowSeconds = now.getTime() / 1000;
  const dump = (handshake: number) =>
    `PRIV\tGWPUB\t51820\toff\nCUSTOMERKEY\tPSK\t203.0.113.9:40000\t10.99.0.2/32,192.168.10.0/24\t${handshake}\t1234\t5678\toff\n`;
  const show =
    (answer: Awaited<ReturnType<WgShow>>): WgShow =>
    async () =>
      answer;
  const status = async (answer: Awaited<ReturnType<WgShow>>) =>
    (await tunnelStatus(row, show(answer), now)).status;
  assert.is(await status({ ok: false, missing: true, message: "spawn wg ENOENT" }), "unknown");
  assert.is(
    await status({
      ok: false,
      missing: false,
      message: "Unable to access interface: No such device",
    }),
    "down",
  );
  assert.is(
    await status({
      ok: false,
      missing: false,
      message: "Unable to access interface: Operation not permitted",
    }),
    "unknown",
  );
  assert.is(await status({ ok: true, dump: dump(0) }), "no_handshake");
  assert.is(await status({ ok: true, dump: dump(nowSeconds - 30) }), "connected");
  assert.is(await status({ ok: true, dump: dump(nowSeconds - 600) }), "stale");
  assert.is(await status({ ok: true, dump: "PRIV\tGWPUB\t51820\toff\n" }), "down");
  assert.is(await status({ ok: true, dump: "garbage" }), "unknown");
  const full = await tunnelStatus(row, show({ ok: true, dump: dump(nowSeconds - 30) }), now);
  assert.equal(full, {
    status: "connected",
    latest_handshake_at: "2026-03-01T11:59:30.000Z",
    rx_bytes: 1234,
    tx_bytes: 5678,
    peer_endpoint: "203.0.113.9:40000",
  });
  assert.equal(parseWgDump(dump(5))?.peers[0]?.allowedIps, ["10.99.0.2/32", "192.168.10.0/24"]);
  assert.equal(parseCidr("fd00::1/64"), { address: "fd00::1", prefix: 64, family: 6 });
  assert.equal(parseCidr("::ffff:10.0.0.1/128")?.family, 6);
  assert.is(parseCidr("fd00:::1/64"), undefined);
  assert.is(parseCidr("1.2.3.04/8"), undefined);
  assert.equal(parseEndpoint("[::1]:51820"), { host: "[::1]", port: 51820 });
  assert.is(parseEndpoint("300.1.1.1:51820"), undefined);
});

function hasCommand(name: string): boolean {
  return spawnSync("sh", ["-c", `command -v ${name}`]).status === 0;
}

test("wg-quick strip accepts both rendered files; wg derives the same public keys", async () => {
  if (!hasCommand("wg-quick")) {
    console.log(
      "  skipped: wg-quick is not installed (apt-get install wireguard-tools; CI installs it)",
    );
    return;
  }
  const { app, acme, admin } = await setup();
  const dir = mkdtempSync(join(tmpdir(), "pbx-wg-"));
  try {
    const tunnel = await create(app, admin, {
      ...BASE,
      org_id: acme.id,
      customer_endpoint: "198.51.100.7:51820",
    });
    for (const side of ["gateway", "customer"] as const) {
      const res = await app.request(
        "GET",
        `/api/v1/admin/customer-tunnels/${tunnel.id}/config?side=${side}`,
        { headers: admin },
      );
      // wg-quick takes the interface name from the file name, which must end in .conf.
      const file = join(dir, side === "gateway" ? `${tunnel.interface}.conf` : "wg0.conf");
      writeFileSync(file, res.text, { mode: 0o600 });
      const stripped = spawnSync("wg-quick", ["strip", file], { encoding: "utf8" });
      assert.is(stripped.status, 0, `wg-quick strip ${side}: ${stripped.stderr}`);
      assert.not.match(stripped.stdout, /^Address/m, "wg-quick's own keys are stripped");
      assert.match(stripped.stdout, /^PrivateKey = /m);
      assert.match(stripped.stdout, /^\[Peer\]$/m);
      const privateKey = field(res.text, "Interface", "PrivateKey")!;
      const derived = execFileSync("wg", ["pubkey"], { input: `${privateKey}\n` })
        .toString()
        .trim();
      assert.is(
        derived,
        side === "gateway" ? tunnel.gateway_public_key : tunnel.customer_public_key,
      );
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
    await app.close();
  }
});

test.run();
