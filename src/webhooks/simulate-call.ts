// `POST /test/call-event`: a simulated call for the org, delivered through the same outbox as
// real engine events, so a tenant can exercise its receiver end to end.
import { randomUUID } from "node:crypto";
import { BadRequest } from "../domain/errors.js";
import { CALL_LIFECYCLE, parseWebhookEvent, type WebhookEvent } from "./events.js";
import { type EmittedEvent, emitEvent } from "./outbox.js";
import type { WebhookContext } from "./use-cases.js";

export const SIMULATED_CALL_EVENTS = [...CALL_LIFECYCLE, "call.failed"] as const;

export interface SimulatedCall {
  /** One of the call.* events; the whole lifecycle when omitted. */
  event?: string;
  call_id?: string;
  from?: string;
  to?: string;
}

export interface SimulatedCallResult {
  call_id: string;
  events: EmittedEvent[];
}

/** The event's `data` in the shape real engine events have (event-data.ts), marked simulated. */
function eventData(type: WebhookEvent, call: Required<Omit<SimulatedCall, "event">>, at: string) {
  const base = {
    call_id: call.call_id,
    uniqueid: call.call_id,
    channel: "",
    from: call.from,
    to: call.to,
    at,
    simulated: true,
  };
  switch (type) {
    case "call.ended":
      return { ...base, answered: true, hangup_cause: 16, hangup_cause_text: "Normal Clearing" };
    case "call.failed":
      return { ...base, answered: false, hangup_cause: 17, hangup_cause_text: "User busy" };
    default:
      return base;
  }
}

/** Emits the call lifecycle (or the one named call event) for `orgId`, in one transaction. */
export async function simulateCallEvent(
  ctx: WebhookContext,
  orgId: string,
  body: SimulatedCall,
): Promise<SimulatedCallResult> {
  let types: readonly WebhookEvent[] = CALL_LIFECYCLE;
  if (body.event !== undefined) {
    const type = parseWebhookEvent(body.event);
    if (!(SIMULATED_CALL_EVENTS as readonly string[]).includes(type)) {
      throw new BadRequest(`event must be one of: ${SIMULATED_CALL_EVENTS.join(", ")}`);
    }
    types = [type];
  }
  const call = {
    call_id: body.call_id ?? `sim-${randomUUID()}`,
    from: body.from ?? "+15550100",
    to: body.to ?? "100",
  };
  const at = ctx.clock().toISOString();
  const events = await ctx.db.transaction().execute(async (trx) => {
    const emitted: EmittedEvent[] = [];
    for (const type of types) {
      emitted.push(await emitEvent(ctx.db, orgId, type, eventData(type, call, at), trx, ctx.clock));
    }
    return emitted;
  });
  return { call_id: call.call_id, events };
}
