// Every row of SPEC.md §4.7's classification table, end to end: call records stored as ingest
// stores them -> the poller (cursor, Local/ filter, longest record per linkedid, org by the
// context prefix in the channel, inbound only) -> HTTP POST to the intake -> the background
// classification (AI-agent extensions from the real API with the internal key, cached 5 min,
// the 8 s bot wait) -> tickets. Time is a FakeTime the test moves; nothing sleeps.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { createTicketRepository } from "../../src/store/ticket-repository.js";
import {
  type BotExtensionLookup,
  cachedBotExtensions,
  httpBotExtensionLookup,
} from "../../src/tickets/bot-extensions.js";
import { classifyCall } from "../../src/tickets/classify.js";
import { createTicketIntake, type TicketIntake } from "../../src/tickets/intake.js";
import { createCallRecordPoller, POLL_INTERVAL_MS } from "../../src/tickets/poller.js";
import { INTERNAL_KEY, startTestApp, type TestApp } from "../api/helpers.js";
import { eventually, FakeTime, serveIntake, storeRecord } from "./helpers.js";

interface Pipeline {
  app: TestApp;
  time: FakeTime;
  org: { id: string; prefix: string; headers: Record<string, string> };
  other: { id: string; prefix: string };
  intake: TicketIntake;
  lookups: string[];
  eventsUrl: string;
  tick(): Promise<{ queued: number; sent: number; failed: number }>;
  /** Every ticket of the org, oldest first. */
  tickets(
    orgId?: string,
  ): Promise<
    Array<{ source: string; priority: string; phone: string; id: string; linkedid: string }>
  >;
  outcome(linkedid: string, orgId?: string): Promise<string | null | undefined>;
  close(): Promise<void>;
}

async function prefixOf(app: TestApp, id: string): Promise<string> {
  const row = await app.db
    .selectFrom("organizations")
    .select("context_prefix")
    .where("id", "=", id)
    .executeTakeFirstOrThrow();
  return row.context_prefix;
}

async function pipeline(options: { internalKey?: string } = {}): Promise<Pipeline> {
  const app = await startTestApp();
  const created = await app.createOrg("Acme");
  const otherCreated = await app.createOrg("Bravo");
  const org = {
    id: created.id,
    prefix: await prefixOf(app, created.id),
    headers: { "x-api-key": created.api_key },
  };
  const other = { id: otherCreated.id, prefix: await prefixOf(app, otherCreated.id) };
  for (const [extension, name, routing_type] of [
    ["101", "Alice", "human"],
    ["150", "Bot", "ai_agent"],
  ] as const) {
    const res = await app.request("POST", "/api/v1/users", {
      headers: org.headers,
      body: { extension, name, routing_type },
    });
    assert.is(res.status, 201, res.text);
  }
  const time = new FakeTime();
  const lookups: string[] = [];
  const http = httpBotExtensionLookup({
    apiUrl: () => app.url,
    internalKey: options.internalKey ?? INTERNAL_KEY,
  });
  const lookup: BotExtensionLookup = (orgId) => {
    lookups.push(orgId);
    return http(orgId);
  };
  const intake = createTicketIntake({
    db: app.db,
    clock: time.clock,
    timers: time,
    bots: cachedBotExtensions({ lookup, clock: time.clock }),
  });
  const served = await serveIntake(intake, INTERNAL_KEY);
  const poller = createCallRecordPoller({
    db: app.db,
    clock: time.clock,
    timers: time,
    eventsUrl: () => served.eventsUrl,
    internalKey: INTERNAL_KEY,
  });
  const tickets = createTicketRepository(app.db);
  return {
    app,
    time,
    org,
    other,
    intake,
    lookups,
    eventsUrl: served.eventsUrl,
    tick: () => poller.tick(),
    async tickets(orgId = org.id) {
      return (await tickets.list(orgId, {}, { limit: 100, offset: 0 })).rows.reverse();
    },
    async outcome(linkedid, orgId = org.id) {
      const row = await app.db
        .selectFrom("ticket_intake")
        .select(["outcome", "status"])
        .where("org_id", "=", orgId)
        .where("linkedid", "=", linkedid)
        .executeTakeFirst();
      return row === undefined ? undefined : row.outcome;
    },
    async close() {
      await poller.stop();
      await intake.stop();
      await served.close();
      await app.close();
    },
  };
}

/** The caller's leg of an inbound call into the org (a PJSIP channel named with its prefix). */
const inbound = (
  p: Pipeline,
  linkedid: string,
  fields: Parameters<typeof storeRecord>[1] extends infer F ? Partial<F> : never = {},
) =>
  storeRecord(p.app.db, {
    linkedid,
    channel: `PJSIP/${p.org.prefix}trunk_carrier-0000000${linkedid.length}`,
    dcontext: `${p.org.prefix}dial`,
    ...fields,
  });

test("missed call: NO ANSWER outside a queue -> missed_call, high", async () => {
  const p = await pipeline();
  try {
    await inbound(p, "call-missed");
    assert.equal(await p.tick(), { queued: 1, sent: 1, failed: 0 });
    await p.intake.idle();
    const [ticket, ...rest] = await p.tickets();
    assert.equal(rest, []);
    assert.is(ticket?.source, "missed_call");
    assert.is(ticket?.priority, "high");
    assert.is(ticket?.phone, "919812345678");
    assert.is(ticket?.linkedid, "call-missed");
    assert.is(await p.outcome("call-missed"), "missed_call");
    assert.equal(await p.tickets(p.other.id), [], "the other org has nothing");
  } finally {
    await p.close();
  }
});

test("queue timeout: NO ANSWER in the org's queue context -> queue_timeout, high", async () => {
  const p = await pipeline();
  try {
    await inbound(p, "call-queue", { dcontext: `${p.org.prefix}queue`, lastapp: "Queue" });
    await p.tick();
    await p.intake.idle();
    const tickets = await p.tickets();
    assert.equal(
      tickets.map((t) => [t.source, t.priority]),
      [["queue_timeout", "high"]],
    );
  } finally {
    await p.close();
  }
});

test("bot dropped: answered by the org's AI agent, no ticket after 8 s -> bot_dropped, high", async () => {
  const p = await pipeline();
  try {
    await inbound(p, "call-bot", {
      disposition: "ANSWERED",
      billsec: 20,
      dst: "150",
      dstchannel: `PJSIP/${p.org.prefix}150-00000002`,
    });
    await p.tick();
    await eventually("the 8 s wait", () => p.time.waiting().includes(8000));
    p.time.advance(7999);
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(await p.tickets(), [], "nothing before 8 s");
    p.time.advance(1);
    await p.intake.idle();
    const tickets = await p.tickets();
    assert.equal(
      tickets.map((t) => [t.source, t.priority]),
      [["bot_dropped", "high"]],
    );
    assert.equal(p.lookups, [p.org.id]);
  } finally {
    await p.close();
  }
});

test("bot call with a ticket of the caller made during the 8 s: no bot_dropped ticket", async () => {
  const p = await pipeline();
  try {
    await inbound(p, "call-bot-2", {
      src: "919800000001",
      disposition: "ANSWERED",
      dstchannel: `PJSIP/${p.org.prefix}150-00000003`,
    });
    await p.tick();
    await eventually("the 8 s wait", () => p.time.waiting().includes(8000));
    // The same caller's missed call reaches the intake meanwhile and opens a ticket.
    await p.intake.receive(p.org.id, {
      linkedid: "call-other",
      uniqueid: "u",
      channel: `PJSIP/${p.org.prefix}trunk_carrier-1`,
      dstchannel: "",
      src: "919800000001",
      dst: "101",
      dcontext: `${p.org.prefix}dial`,
      lastapp: "Dial",
      disposition: "NO ANSWER",
      direction: "inbound",
      duration: 5,
      billsec: 0,
      calldate: "2026-03-01T09:59:40.000Z",
    });
    await eventually("the missed call's ticket", async () => (await p.tickets()).length === 1);
    p.time.advance(8000);
    await p.intake.idle();
    assert.equal(
      (await p.tickets()).map((t) => t.source),
      ["missed_call"],
    );
    assert.is(await p.outcome("call-bot-2"), "bot_ticket_exists");
  } finally {
    await p.close();
  }
});

test("human answered: ANSWERED by a non-bot extension -> skipped", async () => {
  const p = await pipeline();
  try {
    await inbound(p, "call-human", {
      disposition: "ANSWERED",
      dstchannel: `PJSIP/${p.org.prefix}101-00000004`,
    });
    await p.tick();
    await p.intake.idle();
    assert.equal(await p.tickets(), []);
    assert.is(await p.outcome("call-human"), "human_answered");
    assert.equal(p.time.waiting(), [], "no bot wait for a person");
  } finally {
    await p.close();
  }
});

test("repeat caller: the open ticket of the number becomes urgent, no new ticket", async () => {
  const p = await pipeline();
  try {
    await inbound(p, "call-r1", { src: "919811111111" });
    await p.tick();
    await p.intake.idle();
    await inbound(p, "call-r2", { src: "919811111111", dcontext: `${p.org.prefix}queue` });
    await p.tick();
    await p.intake.idle();
    const tickets = await p.tickets();
    assert.is(tickets.length, 1);
    assert.is(tickets[0]!.priority, "urgent");
    assert.is(tickets[0]!.linkedid, "call-r1");
    assert.is(await p.outcome("call-r2"), "repeat_caller");
    const detail = await p.app.request("GET", `/api/v1/tickets/${tickets[0]!.id}`, {
      headers: p.org.headers,
    });
    assert.equal(
      detail.body.history.map((h: { action: string }) => h.action),
      ["created", "escalated"],
    );
    // A closed ticket is not reopened: the next missed call opens a new one.
    await p.app.request("PATCH", `/api/v1/tickets/${tickets[0]!.id}`, {
      headers: p.org.headers,
      body: { status: "closed" },
    });
    p.time.advance(60_000);
    await inbound(p, "call-r3", { src: "919811111111" });
    await p.tick();
    await p.intake.idle();
    assert.equal(
      (await p.tickets()).map((t) => [t.linkedid, t.priority]),
      [
        ["call-r1", "urgent"],
        ["call-r3", "high"],
      ],
    );
  } finally {
    await p.close();
  }
});

test("outbound or internal: never sent by the poller, skipped by the intake", async () => {
  const p = await pipeline();
  try {
    await inbound(p, "call-out", { direction: "outbound", disposition: "NO ANSWER" });
    await inbound(p, "call-int", { direction: "internal", disposition: "NO ANSWER" });
    assert.equal(await p.tick(), { queued: 0, sent: 0, failed: 0 });
    await p.intake.idle();
    assert.equal(await p.tickets(), []);
    // The intake's own rule, should such a call reach it.
    const call = {
      linkedid: "x",
      uniqueid: "x",
      channel: "PJSIP/x-1",
      dstchannel: "",
      src: "1",
      dst: "2",
      dcontext: "",
      lastapp: "",
      disposition: "NO ANSWER",
      direction: "outbound",
      duration: 1,
      billsec: 0,
      calldate: "2026-03-01T00:00:00.000Z",
    };
    assert.equal(classifyCall(call, new Set()), { kind: "skip", reason: "not_inbound" });
    await p.intake.receive(p.org.id, call);
    await p.intake.idle();
    assert.is(await p.outcome("x"), "not_inbound");
    assert.equal(await p.tickets(), []);
  } finally {
    await p.close();
  }
});

test("poller: Local/ channels left out, the longest record per linkedid, org by the prefix in the channel", async () => {
  const p = await pipeline();
  try {
    // The Local half says ANSWERED and is longest; it must not speak for the call.
    await storeRecord(p.app.db, {
      linkedid: "call-legs",
      channel: `Local/101@${p.org.prefix}dial-00000001;2`,
      disposition: "ANSWERED",
      duration: 99,
    });
    await inbound(p, "call-legs", { duration: 5, dcontext: `${p.org.prefix}dial` });
    await inbound(p, "call-legs", { duration: 40, dcontext: `${p.org.prefix}queue` });
    // Another org's call, and one of no org at all.
    await storeRecord(p.app.db, {
      linkedid: "call-b",
      channel: `PJSIP/${p.other.prefix}trunk_carrier-00000009`,
      src: "919822222222",
    });
    await storeRecord(p.app.db, { linkedid: "call-none", channel: "PJSIP/carrier-0000000a" });
    assert.equal(await p.tick(), { queued: 2, sent: 2, failed: 0 });
    await p.intake.idle();
    assert.equal(
      (await p.tickets()).map((t) => [t.linkedid, t.source]),
      [["call-legs", "queue_timeout"]],
      "the 40 s record (queue) spoke for the call",
    );
    assert.equal(
      (await p.tickets(p.other.id)).map((t) => t.linkedid),
      ["call-b"],
    );
    assert.equal(await p.tick(), { queued: 0, sent: 0, failed: 0 }, "nothing new");
  } finally {
    await p.close();
  }
});

test("poller: two orgs' calls that share a linkedid are each their own org's, each ticketed once", async () => {
  const p = await pipeline();
  try {
    // The same engine linkedid in two orgs (engines on two nodes number calls alike): org A's
    // short missed call must not be hidden behind org B's longer one, nor B's body carry A's leg.
    await inbound(p, "shared-1", { duration: 5, src: "919811111111" });
    await storeRecord(p.app.db, {
      linkedid: "shared-1",
      channel: `PJSIP/${p.other.prefix}trunk_carrier-00000007`,
      dcontext: `${p.other.prefix}dial`,
      duration: 50,
      src: "919822222222",
    });
    assert.equal(await p.tick(), { queued: 2, sent: 2, failed: 0 });
    await p.intake.idle();
    assert.equal(
      (await p.tickets()).map((t) => [t.linkedid, t.phone]),
      [["shared-1", "919811111111"]],
    );
    assert.equal(
      (await p.tickets(p.other.id)).map((t) => [t.linkedid, t.phone]),
      [["shared-1", "919822222222"]],
    );
  } finally {
    await p.close();
  }
});

test("poller: runs every 30 s on the injected timers", async () => {
  const p = await pipeline();
  const poller = createCallRecordPoller({
    db: p.app.db,
    clock: p.time.clock,
    timers: p.time,
    eventsUrl: () => "http://127.0.0.1:9/events",
    internalKey: INTERNAL_KEY,
  });
  try {
    poller.start();
    await eventually("the next look scheduled", () => p.time.waiting().includes(POLL_INTERVAL_MS));
    assert.equal(p.time.waiting(), [POLL_INTERVAL_MS]);
  } finally {
    await poller.stop();
    await p.close();
  }
});

test("bot extensions: cached 5 minutes per org; a failed lookup is the empty set (no bot_dropped)", async () => {
  const p = await pipeline();
  try {
    const bot = (linkedid: string, src: string) =>
      inbound(p, linkedid, {
        src,
        disposition: "ANSWERED",
        dstchannel: `PJSIP/${p.org.prefix}150-0000000b`,
      });
    await bot("call-c1", "919833333331");
    await p.tick();
    await eventually("wait 1", () => p.time.waiting().includes(8000));
    p.time.advance(8000);
    await p.intake.idle();
    await bot("call-c2", "919833333332");
    await p.tick();
    await eventually("wait 2", () => p.time.waiting().includes(8000));
    p.time.advance(8000);
    await p.intake.idle();
    assert.equal(p.lookups, [p.org.id], "the second call used the cache");
    // 5 minutes after the lookup the cache is stale: asked again.
    p.time.advance(5 * 60 * 1000);
    await bot("call-c3", "919833333333");
    await p.tick();
    await eventually("wait 3", () => p.time.waiting().includes(8000));
    p.time.advance(8000);
    await p.intake.idle();
    assert.equal(p.lookups, [p.org.id, p.org.id]);
    assert.equal(
      (await p.tickets()).map((t) => t.source),
      ["bot_dropped", "bot_dropped", "bot_dropped"],
    );
  } finally {
    await p.close();
  }
  const failing = await pipeline({ internalKey: "wrong-key" });
  try {
    await inbound(failing, "call-f", {
      disposition: "ANSWERED",
      dstchannel: `PJSIP/${failing.org.prefix}150-0000000c`,
    });
    await failing.tick();
    await failing.intake.idle();
    assert.equal(await failing.tickets(), [], "no bot_dropped while the lookup fails");
    assert.is(await failing.outcome("call-f"), "human_answered");
    assert.equal(failing.time.waiting(), []);
  } finally {
    await failing.close();
  }
});

test("poller restart mid-stream and a failed POST: every call once, none skipped, no duplicate ticket", async () => {
  const p = await pipeline();
  try {
    for (const n of [1, 2, 3]) await inbound(p, `call-s${n}`, { src: `91980000010${n}` });
    await p.tick();
    // A new poller (a restarted server) over the same store, with the intake down at first.
    const down = createCallRecordPoller({
      db: p.app.db,
      clock: p.time.clock,
      timers: p.time,
      eventsUrl: () => "http://127.0.0.1:9/events",
      internalKey: INTERNAL_KEY,
    });
    for (const n of [4, 5]) await inbound(p, `call-s${n}`, { src: `91980000010${n}` });
    assert.equal(await down.tick(), { queued: 2, sent: 0, failed: 2 });
    // Restarted again, intake up: the failed POSTs are due after their retry delay.
    await p.intake.idle();
    assert.equal(await p.tick(), { queued: 0, sent: 0, failed: 0 }, "not due yet");
    p.time.advance(30_000);
    assert.equal(await p.tick(), { queued: 0, sent: 2, failed: 0 });
    // The same call POSTed again (an answer lost after the intake stored it) changes nothing.
    const post = await p.app.db
      .selectFrom("ticket_poller_posts")
      .select(["org_id", "body"])
      .where("linkedid", "=", "call-s4")
      .executeTakeFirstOrThrow();
    const again = await fetch(`${p.eventsUrl}/auto-ticket/${post.org_id}`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-internal-key": INTERNAL_KEY },
      body: post.body,
    });
    assert.is(again.status, 202);
    assert.equal(await again.json(), { accepted: true, duplicate: true });
    await p.intake.idle();
    const linkedids = (await p.tickets()).map((t) => t.linkedid).sort();
    assert.equal(linkedids, ["call-s1", "call-s2", "call-s3", "call-s4", "call-s5"]);
  } finally {
    await p.close();
  }
});

test("intake stopped during the bot wait: the next start classifies the call again, once", async () => {
  const p = await pipeline();
  try {
    await inbound(p, "call-restart", {
      src: "919800000900",
      disposition: "ANSWERED",
      dstchannel: `PJSIP/${p.org.prefix}150-0000000d`,
    });
    await p.tick();
    await eventually("the 8 s wait", () => p.time.waiting().includes(8000));
    await p.intake.stop();
    assert.equal(p.time.waiting(), [], "the wait is cancelled");
    assert.is(await p.outcome("call-restart"), null, "still pending");
    const again = createTicketIntake({
      db: p.app.db,
      clock: p.time.clock,
      timers: p.time,
      bots: cachedBotExtensions({ lookup: async () => ["150"], clock: p.time.clock }),
    });
    await again.start();
    await eventually("the wait again", () => p.time.waiting().includes(8000));
    p.time.advance(8000);
    await again.idle();
    await again.stop();
    assert.equal(
      (await p.tickets()).map((t) => [t.linkedid, t.source]),
      [["call-restart", "bot_dropped"]],
    );
    assert.is(await p.outcome("call-restart"), "bot_dropped");
  } finally {
    await p.close();
  }
});

test.run();
