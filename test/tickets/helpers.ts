// Shared pieces of the auto-ticket tests: a clock and timers the test moves (the 8 s bot wait,
// the 30 s poll, the 5 min cache), call records stored as ingest stores them, a loopback HTTP
// receiver that keeps every request byte for byte, and the intake served on a loopback port.
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { pino } from "pino";
import { createIntakeApp } from "../../src/api/intake-app.js";
import type { TimerHandle, Timers } from "../../src/clock.js";
import { OrgDirectory } from "../../src/domain/calls/call-org.js";
import { insertCallRecord, listOrgMarkers } from "../../src/store/call-record-repository.js";
import type { NewCallRecordRow } from "../../src/store/call-tables.js";
import type { Db } from "../../src/store/database.js";
import type { TicketIntake } from "../../src/tickets/intake.js";

/** A clock and timers that move only when told. */
export class FakeTime implements Timers {
  nowMs: number;
  private next = 1;
  private readonly pending = new Map<number, { at: number; callback: () => void; ms: number }>();

  constructor(start = "2026-03-01T10:00:00.000Z") {
    this.nowMs = Date.parse(start);
  }

  readonly clock = () => new Date(this.nowMs);

  now(): number {
    return this.nowMs;
  }

  setTimer(ms: number, callback: () => void): TimerHandle {
    const id = this.next++;
    this.pending.set(id, { at: this.nowMs + ms, callback, ms });
    return { cancel: () => this.pending.delete(id) };
  }

  /** Delays (ms) of the timers waiting now. */
  waiting(): number[] {
    return [...this.pending.values()].map((t) => t.ms);
  }

  /** Moves time on by `ms`, firing each timer that falls due, in order. */
  advance(ms: number): void {
    const until = this.nowMs + ms;
    for (;;) {
      const due = [...this.pending.entries()]
        .filter(([, t]) => t.at <= until)
        .sort((a, b) => a[1].at - b[1].at)[0];
      if (!due) break;
      this.pending.delete(due[0]);
      this.nowMs = due[1].at;
      due[1].callback();
    }
    this.nowMs = until;
  }
}

/** Resolves once `check` holds, looking again after each turn of the event loop (no sleep). */
export async function eventually(what: string, check: () => boolean | Promise<boolean>) {
  for (let i = 0; i < 20_000; i++) {
    if (await check()) return;
    await new Promise((resolve) => setImmediate(resolve));
  }
  throw new Error(`never happened: ${what}`);
}

let sequence = 0;

/** Stores one call record as call ingest does (org derived, direction marked). */
export async function storeRecord(
  db: Db,
  fields: Partial<NewCallRecordRow> & { linkedid: string; channel: string },
): Promise<void> {
  sequence++;
  // The org as the ingest derives it (SPEC.md §1 rule 3), unless the test names one.
  const orgs = new OrgDirectory(await listOrgMarkers(db));
  const org_id = orgs.orgOf({
    accountcode: fields.accountcode ?? "",
    peeraccount: fields.peeraccount ?? "",
    channel: fields.channel,
  });
  await insertCallRecord(db, {
    org_id,
    uniqueid: `${fields.linkedid}.${sequence}`,
    sequence,
    calldate: "2026-03-01T09:59:00.000Z",
    answerdate: null,
    enddate: "2026-03-01T09:59:30.000Z",
    src: "919812345678",
    dst: "101",
    dcontext: "incoming",
    clid: '"Caller" <919812345678>',
    dstchannel: "",
    lastapp: "Dial",
    lastdata: "",
    duration: 30,
    billsec: 0,
    disposition: "NO ANSWER",
    accountcode: "",
    peeraccount: "",
    direction: "inbound",
    recording_file: null,
    ingested_at: "2026-03-01T09:59:31.000Z",
    ...fields,
  });
}

export interface ReceivedRequest {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
}

/** A loopback HTTP server that records every request and answers `status()`. */
export async function startReceiver(status: (req: ReceivedRequest) => number = () => 200) {
  const requests: ReceivedRequest[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const received = {
        method: req.method ?? "",
        url: req.url ?? "",
        headers: req.headers,
        body: Buffer.concat(chunks).toString("utf8"),
      };
      requests.push(received);
      res.statusCode = status(received);
      res.setHeader("content-type", "application/json");
      res.end("{}");
    });
  });
  server.listen(0, "127.0.0.1");
  await new Promise((resolve) => server.once("listening", resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    requests,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** The intake alone on a loopback port (what `pbxctl intake serve` runs). */
export async function serveIntake(intake: TicketIntake, internalKey: string | null) {
  const app = createIntakeApp({
    intake,
    internalKey,
    logger: pino({ level: "silent" }),
    bodyLimit: "1mb",
  });
  const server = app.listen(0, "127.0.0.1");
  await new Promise((resolve) => server.once("listening", resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    eventsUrl: `${url}/events`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
