// The recording of one call, looked up per record with the org id (SPEC.md §1 rule 4): the
// query names the org first, so another org's call is simply not found.
import type { Db } from "./database.js";

/** A recorded call: the file the dialplan named, and the engine node that carried it. */
export interface StoredRecording {
  file: string;
  /** Null for the one implicit engine (no engine node defined). */
  nodeId: string | null;
}

/**
 * The recording file the dialplan named (`CDR(recording_file)`) on a record of the org whose
 * call (linkedid) or leg (uniqueid) is `callId`, with its record's node; the earliest such
 * record, or null.
 */
export async function recordingOf(
  db: Db,
  orgId: string,
  callId: string,
): Promise<StoredRecording | null> {
  const row = await db
    .selectFrom("call_records")
    .select(["recording_file", "node_id"])
    .where("org_id", "=", orgId)
    .where((eb) => eb.or([eb("linkedid", "=", callId), eb("uniqueid", "=", callId)]))
    .where("recording_file", "is not", null)
    .where("recording_file", "!=", "")
    .orderBy("calldate")
    .orderBy("sequence")
    .limit(1)
    .executeTakeFirst();
  return row?.recording_file ? { file: row.recording_file, nodeId: row.node_id ?? null } : null;
}
