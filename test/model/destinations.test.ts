import { test } from "uvu";
import * as assert from "uvu/assert";
import {
  assertNever,
  DESTINATION_KINDS,
  DID_ROUTE_KINDS,
  IVR_ACTION_KINDS,
  QUEUE_TIMEOUT_KINDS,
  resolveDestination,
} from "../../src/model/destinations.js";
import { ACTION_TYPES, DID_ROUTING_TYPES, QUEUE_TIMEOUT_TYPES } from "../../src/model/org-state.js";
import { makeState } from "./org-fixture.js";

test("every spelling of every destination field names a kind of the registry", () => {
  const spellings = [
    [DID_ROUTING_TYPES, DID_ROUTE_KINDS],
    [ACTION_TYPES, IVR_ACTION_KINDS],
    [QUEUE_TIMEOUT_TYPES, QUEUE_TIMEOUT_KINDS],
  ] as const;
  for (const [list, kinds] of spellings) {
    assert.equal(Object.keys(kinds), [...list]);
    for (const kind of Object.values(kinds)) assert.ok(kind in DESTINATION_KINDS, kind);
  }
});

test("one kind, three spellings: a DID's extension and a queue's user resolve alike", () => {
  const state = makeState();
  const viaDid = resolveDestination(state, DID_ROUTE_KINDS.extension, "1001");
  const viaQueue = resolveDestination(state, QUEUE_TIMEOUT_KINDS.user, "1001");
  assert.equal(viaDid, viaQueue);
  assert.is(viaDid.kind, "user");
});

test("a missing object reads in the field's own words, a bad value in the kind's", () => {
  const state = makeState();
  const field = (ref: string) => `routing destination ${ref} does not exist`;
  assert.equal(resolveDestination(state, "queue", "9999", undefined, field), {
    kind: "invalid",
    field: "action_destination",
    message: "routing destination 9999 does not exist",
  });
  assert.equal(resolveDestination(state, "queue", "9999").kind, "invalid");
  const phone = resolveDestination(state, "phone", "12", undefined, field);
  assert.ok(phone.kind === "invalid" && phone.message.startsWith("Phone number 12"));
});

test("a destination may not lead back into the record holding it", () => {
  const state = makeState();
  const queue = state.queues[0]!;
  assert.equal(resolveDestination(state, "queue", queue.number, queue).kind, "invalid");
  const site = { self: queue, leadsNowhere: "" };
  assert.equal(DESTINATION_KINDS.queue.problem(state, queue.number, site), {
    message: "a queue cannot time out into itself",
    severity: "error",
  });
});

test("DIDs store an IVR by its UUID, a queue by its number", () => {
  const state = makeState();
  const ivr = state.ivrs[0]!;
  assert.is(DESTINATION_KINDS.ivr.stored(state, ivr.extension), ivr.id);
  assert.is(DESTINATION_KINDS.queue.stored(state, state.queues[0]!.id!), "2000");
});

test("assertNever throws on a kind that reached it at run time", () => {
  assert.throws(() => assertNever("surprise" as never), /unhandled kind: "surprise"/);
});

test.run();
