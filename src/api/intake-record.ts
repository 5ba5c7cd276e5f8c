// What the auto-ticket intake accepts (SPEC.md §4.7): one call record, as this server's poller
// sends it or as any CDR source holds a whole row (cdr_pgsql, cdr_adaptive_odbc, cdr_manager's
// columns in lower case). A whole row must not cost a ticket (issue 28 item 2): every standard
// column is taken, the ones classification does not read are ignored whatever their type, numbers
// may come as digit strings, and times come as ISO 8601 or as Asterisk writes them
// (`2026-11-26 13:44:31`, the engine's local time). Only a record without what the table needs
// is refused, with the field named.
import { type Static, Type } from "@sinclair/typebox";
import { BadRequest } from "../domain/errors.js";
import { parseAsteriskTime } from "../engine/call-events.js";
import type { IntakeCall } from "../tickets/classify.js";
import { describeValidationErrors, validatorOnFirstUse } from "./validation.js";

const Text = (maxLength: number) => Type.String({ maxLength });
/** A text column a database may hold as NULL: read as empty. */
const OptionalText = (maxLength: number) =>
  Type.Optional(Type.Union([Text(maxLength), Type.Null()]));
/** A count column: a JSON integer, or the digits a text export writes. */
const Count = Type.Optional(
  Type.Union([Type.Integer({ minimum: 0 }), Type.String({ pattern: "^[0-9]{1,9}$" })]),
);
/** A time column: ISO 8601, or Asterisk's `YYYY-MM-DD HH:MM:SS` (checked when read). */
const Time = Type.Optional(Type.Union([Text(40), Type.Null()]));
const Ignored = Type.Optional(Type.Unknown());

/**
 * The record: what SPEC.md §4.7's table needs is required; the rest of Asterisk's standard CDR
 * columns are named so a reader sees they are welcome, and any other column is ignored.
 */
export const IntakeCallBody = Type.Object(
  {
    linkedid: Type.String({ minLength: 1, maxLength: 150 }),
    src: Type.String({ minLength: 1, maxLength: 80 }),
    channel: Text(200),
    disposition: Text(16),
    /** The dialplan's `CDR(call_direction)` (cdr_manager's `Direction` mapping). */
    direction: Text(10),
    calldate: Time,
    /** Stands in for `calldate` (cdr_pgsql and cdr_adaptive_odbc rows name the start so). */
    start: Time,
    uniqueid: OptionalText(150),
    dstchannel: OptionalText(200),
    dst: OptionalText(80),
    dcontext: OptionalText(80),
    lastapp: OptionalText(80),
    duration: Count,
    billsec: Count,
    clid: Ignored,
    lastdata: Ignored,
    answer: Ignored,
    end: Ignored,
    amaflags: Ignored,
    accountcode: Ignored,
    peeraccount: Ignored,
    userfield: Ignored,
    sequence: Ignored,
    recordingfile: Ignored,
  },
  { additionalProperties: true },
);
type IntakeCallBody = Static<typeof IntakeCallBody>;

const validateBody = validatorOnFirstUse(IntakeCallBody, "body");

/** An ISO 8601 date and time with its zone (or `Z`). */
const ISO_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})$/i;

/**
 * The call's start as ISO 8601 UTC. An Asterisk time carries no offset and a row no engine
 * `Timestamp`, so it is read in this process's zone, the fallback docs/calls.md describes.
 */
function callStart(value: string, field: string): string {
  const date = ISO_TIME.test(value) ? new Date(value) : parseAsteriskTime(value);
  if (date === null || Number.isNaN(date.getTime())) {
    throw new BadRequest(
      `${field} must be an ISO 8601 date and time or Asterisk's YYYY-MM-DD HH:MM:SS`,
    );
  }
  return date.toISOString();
}

const count = (value: number | string | undefined) => (value === undefined ? 0 : Number(value));

/** The call the intake classifies, from a record; a BadRequest naming what is missing or bad. */
export function intakeCallFromRecord(body: unknown): IntakeCall {
  if (!validateBody(body)) {
    throw new BadRequest(describeValidationErrors(validateBody.errors, "body"));
  }
  const record = body as IntakeCallBody;
  const time = record.calldate ? "calldate" : record.start ? "start" : null;
  if (time === null) throw new BadRequest("calldate is required (or start)");
  return {
    linkedid: record.linkedid,
    uniqueid: record.uniqueid ?? "",
    channel: record.channel,
    dstchannel: record.dstchannel ?? "",
    src: record.src,
    dst: record.dst ?? "",
    dcontext: record.dcontext ?? "",
    lastapp: record.lastapp ?? "",
    disposition: record.disposition,
    direction: record.direction,
    duration: count(record.duration),
    billsec: count(record.billsec),
    calldate: callStart(record[time]!, time),
  };
}
