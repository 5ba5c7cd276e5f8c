// One tenant cannot take another's carrier traffic (issue 28 item 3), proven in a real Asterisk 22
// behind the service: org A naming org B's carrier address as its own trunk's is refused (409,
// the other org unnamed), so a DID call arriving from that carrier still enters org B's incoming
// context; and with `endpoint_identifier_order = username,ip` (engine init) a phone registering
// from the carrier's very address is identified by its username and registers as itself.
import { execFile } from "node:child_process";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { freeLoopbackPort } from "../../src/engine/testing/asterisk-instance.js";
import { insertDid, insertUser, sipUser } from "../integration/helpers.js";
import { startBaresip } from "./baresip.js";
import { type Service, startService } from "./service.js";
import { channelsIdle } from "./trace.js";

const CARRIER_HOST = "127.0.0.2";
const B_DID = "918065978009";

type Org = Awaited<ReturnType<Service["createOrg"]>>;

const test = suite<{ service: Service; acme: Org; bravo: Org; carrierPort: number }>(
  "carrier claims",
);

test.before(async (context) => {
  context.carrierPort = await freeLoopbackPort();
  context.service = await startService();
  const { service } = context;
  context.acme = await service.createOrg("Acme");
  context.bravo = await service.createOrg("Bravo");
  const { acme, bravo } = context;
  await insertUser(service.rig.db, bravo.id, sipUser(bravo.prefix, "101"));
  await service.call("POST", "/trunks", bravo, {
    name: "carrier",
    host: CARRIER_HOST,
    port: context.carrierPort,
  });
  await insertDid(service.rig.db, bravo.id, `+${B_DID}`);
  // Org A names B's carrier as its own: as a host, and inside a range.
  const asHost = await service.rig.request("POST", "/api/v1/trunks", {
    headers: acme.headers,
    body: { name: "mine", host: CARRIER_HOST },
  });
  assert.is(asHost.status, 409, asHost.text);
  assert.equal(asHost.body, {
    error: `${CARRIER_HOST} is already matched by another organization's trunk`,
  });
  const asRange = await service.rig.request("POST", "/api/v1/trunks", {
    headers: acme.headers,
    body: { name: "mine", host: "127.0.0.9", match: ["127.0.0.0/29"] },
  });
  assert.is(asRange.status, 409, asRange.text);
  await service.deploy();
});

test.after(async (context) => {
  await context.service?.stop();
});

test("a DID call from B's carrier address enters B's incoming context", async (context) => {
  const { service, bravo, carrierPort } = context;
  await channelsIdle(service.engine);
  const since = service.engine.log().length;
  // One INVITE from the carrier's address and port, as the carrier would send it.
  await new Promise<void>((resolve) => {
    execFile(
      "sipp",
      [
        "-sn",
        "uac",
        "-i",
        CARRIER_HOST,
        "-p",
        String(carrierPort),
        "-s",
        B_DID,
        "-m",
        "1",
        "-timeout",
        "10s",
        "-bg",
        `127.0.0.1:${service.engine.sipPort}`,
      ],
      // sipp's own verdict does not matter (the DID plays "not in service" and hangs up): what
      // the engine ran does.
      () => resolve(),
    );
  });
  const log = await service.engine.waitForLog(
    new RegExp(`Executing \\[[^\\]@]*@${bravo.prefix}incoming:1\\]`),
    { since, timeoutMs: 20_000 },
  );
  assert.match(log, `@${bravo.prefix}incoming:1]`);
  assert.not.match(log.slice(since), `${context.acme.prefix}incoming`);
});

test("a phone registering from the carrier's address registers as itself", async (context) => {
  const { service, bravo } = context;
  const phone = await startBaresip({
    user: `${bravo.prefix}101`,
    password: "pw-101",
    registrar: `127.0.0.1:${service.engine.sipPort}`,
    listenHost: CARRIER_HOST,
  });
  try {
    const registered = await phone.waitForEvent((e) => /^REGISTER_(OK|FAIL)$/.test(e.type));
    assert.is(registered.type, "REGISTER_OK", JSON.stringify(registered));
    const contacts = await service.engine.cli(`pjsip show aor ${bravo.prefix}101`);
    assert.match(contacts, `${CARRIER_HOST}`);
  } finally {
    await phone.stop();
  }
});

test("no WARNING or ERROR", (context) => {
  assert.equal(
    context.service.engine.problems().filter((line) => !/sipp|RTP|res_rtp/.test(line)),
    [],
  );
});

test.run();
