// A save through the API reaches the running engine: the real store, scheduler (fake clock: the
// test ends the debounce), deployer and AMI target reload a real Asterisk 22, once per kind of
// reload. Before the debounce the engine still runs the old config (the answer never waits for
// it); after it, the engine's own CLI shows the change, and the org's deploy record names exactly
// the reload that carried it.
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { type Service, startService } from "./service.js";

interface Context {
  service: Service;
  prefix: string;
  headers: Record<string, string>;
}

const test = suite<Context>("api save");

test.before(async (context) => {
  context.service = await startService();
  const org = await context.service.createOrg("Acme");
  context.prefix = org.prefix;
  context.headers = org.headers;
  await save(context, "POST", "/users", { extension: "101", name: "Alice" });
  await context.service.deploy();
});

test.after(async (context) => {
  await context.service?.stop();
});

function save(context: Context, method: string, path: string, body: unknown, status?: number) {
  return context.service.call(method, path, context, body, status);
}

/** The reload commands of the org's newest deploy (GET /config/status), which must be ok. */
async function lastReloads(context: Context): Promise<string[]> {
  const status = await context.service.call("GET", "/config/status", context);
  assert.is(status.live, true, "applied = desired");
  const [last] = status.deploys;
  assert.is(last.result, "ok", JSON.stringify(last));
  return last.reloads.map((r: { command: string; status: string }) => `${r.command}: ${r.status}`);
}

test("dialplan: an IVR menu saved through the API is in the engine's dialplan", async (context) => {
  const { engine } = context.service;
  const ivr = await save(context, "POST", "/ivrs", { name: "Main", extension: "500" });
  await context.service.deploy();
  const menu = `${context.prefix}ivrm_500`;
  assert.not.match(await engine.cli(`dialplan show ${menu}`), "'1' =>");

  await save(context, "PUT", `/ivrs/${ivr.id}/menu`, {
    options: [{ digit: "1", action_type: "extension", action_destination: "101" }],
  });
  assert.not.match(await engine.cli(`dialplan show ${menu}`), "'1' =>", "not before the deploy");
  await context.service.deploy();
  const shown = await engine.cli(`dialplan show 1@${menu}`);
  assert.match(shown, `Goto(${context.prefix}internal,101,1)`);
  assert.equal(await lastReloads(context), ["dialplan reload: ok"]);
});

test("pjsip: a user added through the API is an endpoint in the engine", async (context) => {
  const { engine } = context.service;
  const endpoint = `${context.prefix}102`;
  assert.match(await engine.cli(`pjsip show endpoint ${endpoint}`), "Unable to find object");
  await save(context, "POST", "/users", { extension: "102", name: "Bob" });
  assert.match(await engine.cli(`pjsip show endpoint ${endpoint}`), "Unable to find object");
  await context.service.deploy();
  const shown = await engine.cli(`pjsip show endpoint ${endpoint}`);
  assert.match(shown, `Endpoint:  ${endpoint}`);
  assert.match(shown, `context                            : ${context.prefix}internal`);
  // A user is an endpoint and an extension: both modules reload, in that order.
  assert.equal(await lastReloads(context), [
    "module reload res_pjsip.so: ok",
    "dialplan reload: ok",
  ]);
});

test("queues: a member added through the API is in the engine's queue", async (context) => {
  const { engine } = context.service;
  const queue = await save(context, "POST", "/queues", { number: "600", name: "Support" });
  await context.service.deploy();
  const name = `${context.prefix}q600`;
  assert.match(await engine.cli(`queue show ${name}`), "No Members");

  await save(context, "POST", `/queues/${queue.id}/members`, { extension: "101" });
  assert.match(await engine.cli(`queue show ${name}`), "No Members", "not before the deploy");
  await context.service.deploy();
  const shown = await engine.cli(`queue show ${name}`);
  assert.match(shown, `Alice (Local/600*101@${context.prefix}qmember/n`);
  // Only the changed queue is reloaded, by name (the member's Local channel target is a
  // dialplan extension, so the dialplan reloads too).
  assert.equal(await lastReloads(context), ["dialplan reload: ok", `queue reload all ${name}: ok`]);
});

test("through all these saves the engine logged no WARNING or ERROR", (context) => {
  assert.equal(context.service.engine.problems(), []);
});

test.run();
