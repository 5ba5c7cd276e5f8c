// `pbxctl calls tail`: the engine's call events as the server stores them, followed like
// `kubectl logs -f`. It reads the store (the same database the server writes, SQLite in WAL
// mode lets a reader follow a writer), so it needs no credential and no engine connection, and
// shows exactly what rule 3 gave to each org.

import type { StoredCallEvent } from "../../model/call-records.js";
import { anyCallRecorded, callEventsAfter, tailStartId } from "../../store/call-event-feed.js";
import type { Db } from "../../store/database.js";
import { engineTime } from "./call-webhooks.js";

export interface TailedCallEvent {
  id: number;
  org_id: string;
  linkedid: string;
  uniqueid: string;
  /** ISO 8601 UTC, the engine's time of the event. */
  at: string;
  event: string;
  channel: string;
  state: string;
  context: string;
  exten: string;
  detail: Record<string, string>;
}

export interface TailOptions {
  db: Db;
  /** One org, or every org (null). */
  orgId: string | null;
  /** Events already stored to show first. */
  lines: number;
  /** Keep reading new events until `signal` aborts. */
  follow: boolean;
  signal?: AbortSignal;
  /** Waits between reads when nothing new arrived (injected by tests). */
  pause: (signal?: AbortSignal) => Promise<void>;
}

const BATCH = 500;

function view(row: StoredCallEvent): TailedCallEvent {
  return {
    id: row.id,
    org_id: row.org_id,
    linkedid: row.linkedid,
    uniqueid: row.uniqueid,
    at: engineTime(row.timestamp),
    event: row.event,
    channel: row.channel,
    state: row.state,
    context: row.context,
    exten: row.exten,
    detail: JSON.parse(row.detail) as Record<string, string>,
  };
}

/** The last `lines` stored events, then (with `follow`) each new one as it is stored. */
export async function* tailCallEvents(options: TailOptions): AsyncGenerator<TailedCallEvent> {
  const { db, orgId, signal } = options;
  let after = await tailStartId(db, orgId, options.lines);
  for (;;) {
    if (signal?.aborted) return;
    const rows = await callEventsAfter(db, { orgId, afterId: after, limit: BATCH });
    for (const row of rows) yield view(row);
    if (rows.length > 0) after = rows[rows.length - 1]!.id;
    if (rows.length === BATCH) continue;
    if (!options.follow) return;
    await options.pause(signal);
  }
}

/** One line of a tailed event for a terminal. */
export function formatTailedEvent(event: TailedCallEvent, showOrg: boolean): string {
  const detail = Object.entries(event.detail)
    .map(([key, value]) => `${key}=${value}`)
    .join(" ");
  return [
    event.at,
    ...(showOrg ? [event.org_id.slice(0, 8)] : []),
    event.linkedid,
    event.event.padEnd(18),
    event.channel,
    event.state,
    `${event.context},${event.exten}`,
    detail,
  ]
    .filter((part) => part !== "")
    .join("  ");
}

/**
 * Why a store shows no call at all, and what to do, or null when it holds some: the usual cause
 * is a server that never had an engine to hear calls from (PBX_ENGINE=none, the default).
 */
export async function noEngineEventsHint(db: Db): Promise<string | null> {
  if (await anyCallRecorded(db)) return null;
  return (
    "no engine events are recorded in this store: a server with PBX_ENGINE=none (the default, " +
    "files only) hears no calls. Connect an Asterisk: `pbxctl engine init --etc /etc/asterisk`, " +
    "then run `pbxctl serve` with PBX_ENGINE=ami and the PBX_AMI_* variables it prints " +
    "(docs/operating.md)."
  );
}
