// IVR saves through the real server, scheduler (fake clock) and deployer: a save answers before
// the deploy, the compiled dialplan reflects it after the debounce, and publish rebuilds the
// whole org, not only the IVR.
import { existsSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { insertUser, type Rig, sipUser, startRig } from "../integration/helpers.js";
import { fakeSpeechEngine } from "./ivrs-helpers.js";

let rig: Rig;
let org: { id: string; api_key: string; prefix: string };
let headers: Record<string, string>;

test.before(async () => {
  rig = await startRig();
  rig.running.pbx.deps.speechEngine = fakeSpeechEngine();
  org = await rig.createOrg("Acme");
  headers = { "x-api-key": org.api_key };
  await rig.advance(1000);
});

test.after(async () => {
  await rig.close();
});

function dialplan(): string {
  return rig.read(`orgs/${org.prefix}/extensions.conf`) ?? "";
}

test("an IVR save answers before the deploy; the dialplan has it after the debounce", async () => {
  const created = await rig.request("POST", "/api/v1/ivrs", {
    headers,
    body: { name: "Main", extension: "800" },
  });
  assert.is(created.status, 201, created.text);
  const id = created.body.id as string;
  assert.not.ok(dialplan().includes(`[${org.prefix}ivrm_800]`), "not deployed yet");
  await rig.advance(800);
  assert.ok(dialplan().includes(`[${org.prefix}ivrm_800]`), dialplan());

  const greeting = await rig.request("POST", `/api/v1/ivrs/${id}/generate-greeting`, {
    headers,
    body: { text: "Welcome" },
  });
  assert.is(greeting.status, 200, greeting.text);
  assert.ok(existsSync(join(rig.dataDir, "sounds", "greetings", `greeting_ivr_${id}.wav`)));
  assert.not.ok(dialplan().includes(`greeting_ivr_${id}`));
  await rig.advance(800);
  assert.ok(dialplan().includes(`Background(greetings/greeting_ivr_${id})`), dialplan());
});

test("publish rebuilds the whole org, including changes made outside the IVR", async () => {
  const created = await rig.request("POST", "/api/v1/ivrs", {
    headers,
    body: { name: "Second", extension: "801" },
  });
  await rig.advance(800);
  // A user written straight to the store: nothing scheduled a deploy for it.
  await insertUser(rig.db, org.id, sipUser(org.prefix, "1801"));
  await rig.advance(5000);
  const pjsip = () => rig.read(`orgs/${org.prefix}/pjsip.conf`) ?? "";
  assert.not.ok(pjsip().includes(`[${org.prefix}1801]`));
  const res = await rig.request("POST", `/api/v1/ivrs/${created.body.id}/publish`, { headers });
  assert.equal(res.body, { success: true });
  await rig.advance(800);
  assert.ok(pjsip().includes(`[${org.prefix}1801]`), pjsip());
});

test.run();
