// A missed call through a real Asterisk 22 becomes a `missed_call` ticket (SPEC.md §4.7), with
// nothing faked between: `pbxctl serve` (store, API, AMI deployer, call tracking, the poller and
// the intake under /events) drives the engine; org A's DID routes to extension 101, whose real
// phone (baresip) rings for its 3 s ring time and is never answered. The caller is org A's other
// phone (102), originated into the org's incoming context as a carrier's call would arrive, so
// the caller's channel is a PJSIP channel named with the org's context prefix, not `Local/`.
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { createDidRepository } from "../../src/store/did-repository.js";
import { createTicketRepository } from "../../src/store/ticket-repository.js";
import { type Baresip, startBaresip } from "./baresip.js";
import { until } from "./helpers.js";
import { type Service, startService } from "./service.js";
import { channelsIdle } from "./trace.js";

interface Context {
  service: Service;
  org: { id: string; prefix: string; headers: Record<string, string> };
  phones: Baresip[];
}

const test = suite<Context>("auto-tickets from a real call");

const DID = "+918065978001";

test.before(async (context) => {
  try {
    await setUp(context);
  } catch (error) {
    // uvu reports a failed hook without its error.
    console.error(error);
    throw error;
  }
});

async function setUp(context: Context): Promise<void> {
  context.phones = [];
  context.service = await startService();
  const org = await context.service.createOrg("Acme");
  context.org = org;
  const post = (path: string, body: unknown) => context.service.call("POST", path, org, body);
  const users = [];
  for (const [extension, name] of [
    ["101", "Alice"],
    ["102", "Bob"],
  ] as const) {
    users.push(await post("/users", { extension, name, ring_time: 3 }));
  }
  await createDidRepository(context.service.rig.db).insert(org.id, {
    number: DID,
    status: "active",
    pool_status: "assigned",
    is_default: true,
    routing_type: "extension",
    routing_destination: "101",
    routing_environment: "prod",
  });
  await context.service.call("POST", `/organizations/${org.id}/regenerate`, org, undefined, 200);
  await context.service.deploy();
  for (const user of users) {
    const phone = await startBaresip({
      user: user.sip_username,
      password: user.sip_password,
      registrar: `127.0.0.1:${context.service.engine.sipPort}`,
    });
    context.phones.push(phone);
    const registered = await phone.waitForEvent((e) => /^REGISTER_(OK|FAIL)$/.test(e.type));
    assert.is(registered.type, "REGISTER_OK", JSON.stringify(registered));
  }
}

test.after(async (context) => {
  for (const phone of context.phones ?? []) await phone.stop();
  await context.service?.stop();
});

test("an inbound call nobody answers: call record -> poller -> intake -> missed_call ticket", async (context) => {
  const { service, org } = context;
  const [alice, bob] = context.phones as [Baresip, Baresip];
  const running = service.rig.running;
  await channelsIdle(service.engine);
  const bobMark = bob.events.length;
  const aliceMark = alice.events.length;
  const answer = await running.calls.connection!.action({
    Action: "Originate",
    Async: "true",
    Channel: `PJSIP/${org.prefix}102`,
    Context: `${org.prefix}incoming`,
    Exten: DID,
    Priority: "1",
    CallerID: '"Caller" <919812345678>',
  });
  assert.is(String(answer.response).toLowerCase(), "success", JSON.stringify(answer));
  // The caller's phone picks up; the call then rings 101, which never answers.
  await bob.waitForEvent((e) => e.type === "CALL_INCOMING", { since: bobMark });
  await bob.command("accept");
  await alice.waitForEvent((e) => e.type === "CALL_INCOMING", { since: aliceMark });
  await channelsIdle(service.engine, 30_000);

  const db = service.rig.db;
  const records = await until("the call's records", async () => {
    const rows = await db
      .selectFrom("call_records")
      .selectAll()
      .where("org_id", "=", org.id)
      .where("disposition", "=", "NO ANSWER")
      .execute();
    return rows.length > 0 ? rows : null;
  });
  const caller = records.find((r) => r.channel.startsWith(`PJSIP/${org.prefix}102-`));
  assert.ok(caller, JSON.stringify(records, null, 1));
  assert.is(caller.direction, "inbound");

  const result = await running.tickets.poller!.tick();
  assert.ok(result.sent >= 1, JSON.stringify(result));
  await running.tickets.intake.idle();
  const tickets = await createTicketRepository(db).list(org.id, {}, { limit: 10, offset: 0 });
  assert.is(tickets.total, 1, JSON.stringify(tickets.rows));
  const ticket = tickets.rows[0]!;
  assert.equal(
    [ticket.source, ticket.priority, ticket.status, ticket.linkedid],
    ["missed_call", "high", "open", caller.linkedid],
  );
  assert.match(ticket.channel_id, `PJSIP/${org.prefix}102-`);
  // The API shows it to the org.
  const listed = await service.call("GET", "/tickets?source=missed_call", org);
  assert.is(listed.total, 1);
});

test.run();
