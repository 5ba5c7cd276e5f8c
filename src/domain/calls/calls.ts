// Call listings of an org (SPEC.md §4.5): the call list with live calls first, the history (one
// call per linkedid), counts, and a call's journey. Every read is scoped to the caller's org: the
// store's rows carry the org derived at ingest by rule 3 (call-org.ts), live channels the same
// rule, and nothing here widens it.

import type { StoredCall, StoredCallEvent, StoredCallRecord } from "../../model/call-records.js";
import type { CallView, JourneyLeg, JourneyStep, LiveCallView } from "../../model/call-views.js";
import type { CallFilters } from "../../store/call-record-repository.js";
import {
  callEventsOf,
  callRecordsOf,
  callTotals,
  countCallsMatching,
  listCalls,
} from "../../store/call-record-repository.js";
import type { Db } from "../../store/database.js";

export type { CallView };

import { NotFound } from "../errors.js";
import { type Pagination, pageWindow } from "../page-window.js";
import type { LiveCall, LiveCallsView } from "./live-calls.js";

/** What the `extension` and `number` history filters accept (the API and the CLI check these). */
export const CALL_FILTER_PATTERNS = {
  extension: { pattern: "^[0-9*#+]{1,20}$", rule: "1 to 20 of 0-9 * # +" },
  number: { pattern: "^[0-9]{3,20}$", rule: "3 to 20 digits" },
} as const;

export interface CallQuery extends Omit<CallFilters, "excludeLinkedIds"> {
  limit?: number;
  offset?: number;
}

function callView(row: StoredCall, live: boolean): CallView {
  // The node that carried it is platform detail (issue 25): never shown to the org.
  const { org_id: _org, first_uniqueid, first_sequence: _sequence, node_id: _node, ...call } = row;
  return { ...call, uniqueid: first_uniqueid, live };
}

function liveCallView(call: LiveCall): LiveCallView {
  const first = call.channels[0]!;
  return {
    linkedid: call.linkedid,
    uniqueid: first.uniqueid,
    calldate: call.since.toISOString(),
    live: true,
    // `Up` once any leg is answered, else the first leg's state (Ring, Ringing, Down...).
    status: call.channels.some((c) => c.state === "Up") ? "Up" : first.state,
    src: first.callerIdNum,
    dst: first.exten,
    channels: call.channels.map((c) => ({
      channel: c.channel,
      uniqueid: c.uniqueid,
      state: c.state,
      context: c.context,
      exten: c.exten,
    })),
  };
}

function filtersOf(query: CallQuery): CallFilters {
  const { limit: _limit, offset: _offset, ...filters } = query;
  return filters;
}

export interface CallsDeps {
  db: Db;
  live: LiveCallsView;
}

/**
 * The org's calls: live calls first (newest first, marked `live`), then stored calls newest
 * first. A call still live is listed once, as live. `total` counts both.
 */
export async function listOrgCalls(
  deps: CallsDeps,
  orgId: string,
  query: CallQuery,
): Promise<{ calls: Array<LiveCallView | CallView>; total: number; pagination: Pagination }> {
  const { limit, offset } = pageWindow(query);
  const live = deps.live.callsOf(orgId);
  const filters: CallFilters = {
    ...filtersOf(query),
    excludeLinkedIds: live.map((c) => c.linkedid),
  };
  const liveShown = live.slice(offset, offset + limit).map(liveCallView);
  const storedOffset = Math.max(0, offset - live.length);
  const storedLimit = limit - liveShown.length;
  const stored =
    storedLimit > 0
      ? await listCalls(deps.db, orgId, filters, { limit: storedLimit, offset: storedOffset })
      : { rows: [], total: await countCallsMatching(deps.db, orgId, filters) };
  const total = live.length + stored.total;
  return {
    calls: [...liveShown, ...stored.rows.map((row) => callView(row, false))],
    total,
    pagination: { total, limit, offset },
  };
}

/** The org's finished calls, one per linkedid, newest first, with the history filters. */
export async function callHistory(
  deps: CallsDeps,
  orgId: string,
  query: CallQuery,
): Promise<{ calls: CallView[]; total: number; pagination: Pagination }> {
  const { limit, offset } = pageWindow(query);
  const live = new Set(deps.live.callsOf(orgId).map((call) => call.linkedid));
  const { rows, total } = await listCalls(deps.db, orgId, filtersOf(query), { limit, offset });
  return {
    calls: rows.map((row) => callView(row, live.has(row.linkedid))),
    total,
    pagination: { total, limit, offset },
  };
}

/** Counts of the org's calls (history filters apply) and how many are live now. */
export async function callCounts(deps: CallsDeps, orgId: string, query: CallQuery) {
  const totals = await callTotals(deps.db, orgId, filtersOf(query));
  return { ...totals, active: deps.live.callsOf(orgId).length, live_tracking: deps.live.tracking };
}

function legView(row: StoredCallRecord): JourneyLeg {
  const {
    id: _id,
    org_id: _org,
    linkedid: _linkedid,
    clid: _clid,
    accountcode: _account,
    peeraccount: _peer,
    ingested_at: _ingested,
    node_id: _node,
    ...leg
  } = row;
  return leg;
}

function stepView(row: StoredCallEvent): JourneyStep {
  const [seconds = "0", micros = "0"] = row.timestamp.split(".");
  const epochMs = Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
  return {
    at: new Date(epochMs).toISOString(),
    timestamp: `${Number(seconds)}.${micros}`,
    event: row.event,
    uniqueid: row.uniqueid,
    channel: row.channel,
    state: row.state,
    context: row.context,
    exten: row.exten,
    detail: JSON.parse(row.detail) as Record<string, string>,
  };
}

/**
 * One call of the org: its steps (channel, dial, bridge, queue and hangup events) in the
 * engine's time order, its records (legs) in the order the engine started them, and its
 * channels still up — only those rule 3 gives to the org. 404 when the org has none of them
 * (another org's call is not revealed).
 */
export async function callJourney(deps: CallsDeps, orgId: string, linkedid: string) {
  const legs = (await callRecordsOf(deps.db, orgId, linkedid)).map(legView);
  const events = (await callEventsOf(deps.db, orgId, linkedid)).map(stepView);
  const live = deps.live.callOf(orgId, linkedid);
  if (legs.length === 0 && events.length === 0 && !live) throw new NotFound("Call not found");
  return {
    linkedid,
    live: live !== null,
    events,
    legs,
    live_channels: live ? liveCallView(live).channels : [],
  };
}
