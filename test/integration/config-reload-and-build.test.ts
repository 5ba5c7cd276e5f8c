// POST /config/reload on the server as it runs, and a server-side build the compiler refuses:
// answered 409 on an explicit deploy, logged and not written on a background one.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { insertUser, sipUser, withRig } from "./helpers.js";

test("POST /config/reload reloads the org's modules; a refused reload answers 502 naming it", () =>
  withRig({ ami: true }, async (rig) => {
    const org = await rig.createOrg();
    await insertUser(rig.db, org.id, sipUser(org.prefix, "100"));
    const headers = { "x-api-key": org.api_key };
    const deployed = await rig.request("POST", "/api/v1/config/deploy", { headers });
    assert.is(deployed.status, 200, deployed.text);
    rig.takeReloads();

    const reloaded = await rig.request("POST", "/api/v1/config/reload", { headers });
    assert.is(reloaded.status, 200, reloaded.text);
    assert.is(reloaded.body.unit, `org:${org.prefix}`);
    const commands = reloaded.body.reloads.map((r: { command: string }) => r.command);
    assert.ok(commands.includes("dialplan reload"), commands.join(", "));
    assert.ok(commands.includes("module reload res_pjsip.so"), commands.join(", "));
    assert.ok(
      reloaded.body.reloads.every((r: { status: string }) => r.status === "ok"),
      reloaded.text,
    );
    assert.equal(rig.takeReloads().sort(), [...commands].sort(), "the engine got those reloads");

    rig.ami!.refuseNextReloads = 100;
    const refused = await rig.request("POST", "/api/v1/config/reload", { headers });
    assert.is(refused.status, 502, refused.text);
    assert.match(refused.body.error, /^Reload failed: /);
    assert.match(refused.body.error, /already in progress/);
  }));

test("a build the compiler refuses: 409 on deploy, logged on a background deploy, nothing written", () =>
  withRig({ ami: true }, async (rig) => {
    const org = await rig.createOrg();
    const headers = { "x-api-key": org.api_key };
    await rig.advance(1000);
    const before = rig.read(`orgs/${org.prefix}/pjsip.conf`);
    assert.ok(before !== null, "the org's first deploy ran");
    const trunk = await rig.request("POST", "/api/v1/trunks", {
      headers,
      body: {
        name: "carrier1",
        host: "sip.carrier.example",
        username: "acct42",
        registration: true,
      },
    });
    assert.is(trunk.status, 201, trunk.text);
    await rig.advance(1000);
    const withTrunk = rig.read(`orgs/${org.prefix}/pjsip.conf`);
    assert.match(withTrunk ?? "", /type=registration/);
    // A state the API never writes, reached behind its back: a registration without a username.
    await rig.db
      .updateTable("trunks")
      .set({ username: null })
      .where("org_id", "=", org.id)
      .execute();

    const deploy = await rig.request("POST", "/api/v1/config/deploy", { headers });
    assert.is(deploy.status, 409, deploy.text);
    assert.match(deploy.body.error, /registration needs a username/);

    const edit = await rig.request("PUT", `/api/v1/organizations/${org.id}`, {
      headers,
      body: { settings: { max_concurrent_calls: 3 } },
    });
    assert.is(edit.status, 200, edit.text);
    await rig.advance(1000);
    const logged = rig.logs.map((line) => JSON.parse(line)).filter((l) => l.level >= 50);
    assert.ok(
      logged.some(
        (l) =>
          l.msg === "background deploy failed" &&
          l.org_id === org.id &&
          /registration needs a username/.test(String(l.err)),
      ),
      JSON.stringify(logged),
    );
    assert.is(
      rig.read(`orgs/${org.prefix}/pjsip.conf`),
      withTrunk,
      "the live files stay as they were",
    );
    const status = await rig.request("GET", "/api/v1/config/status", { headers });
    assert.is(status.status, 200, status.text);
    assert.match(status.body.compile_error ?? "", /registration needs a username/);
  }));

test.run();
