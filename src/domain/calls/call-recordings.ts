// A call's recording for download (SPEC.md §1 rule 4, §4.5): found through the org's own
// record, and opened at a path built only from validated ids, never from the stored text. A call
// an engine node carried was recorded on that node: its file is read from the node's recordings
// directory (`<nodes dir>/<node name>.recordings`, docs/nodes.md), which every replica mounts.
import { join } from "node:path";
import { nodeRecordingsDir } from "../../deploy/node-dirs.js";
import { recordingOf } from "../../store/call-recording-lookup.js";
import type { Db } from "../../store/database.js";
import { findEngineNode } from "../../store/engine-node-repository.js";
import { NotFound } from "../errors.js";
import { openSizedFile, type SizedFile } from "../open-file.js";

export const RECORDING_NOT_FOUND = "Recording not found";

/** An engine unique id as the dialplan writes it into the recording's name. */
const UNIQUEID = /^[A-Za-z0-9_-][A-Za-z0-9_.-]{0,149}$/;

/**
 * The uniqueid of a recording name `<orgId>/<uniqueid>.wav` of this org, or null for any other
 * shape (another org's folder, a path, a name the dialplan does not write).
 */
export function recordedUniqueid(orgId: string, recordingFile: string): string | null {
  const prefix = `${orgId}/`;
  if (!recordingFile.startsWith(prefix) || !recordingFile.endsWith(".wav")) return null;
  const uniqueid = recordingFile.slice(prefix.length, -".wav".length);
  return UNIQUEID.test(uniqueid) ? uniqueid : null;
}

/**
 * Opens the recording of the org's call (linkedid) or leg (uniqueid) `callId`. 404 `Recording
 * not found` when the org has no such call, the call was not recorded, or the file is gone.
 */
export async function openCallRecording(
  deps: RecordingDirs & { db: Db },
  orgId: string,
  callId: string,
): Promise<SizedFile> {
  const stored = await recordingOf(deps.db, orgId, callId);
  const uniqueid = stored === null ? null : recordedUniqueid(orgId, stored.file);
  if (stored === null || uniqueid === null) throw new NotFound(RECORDING_NOT_FOUND);
  return openSizedFile(
    join(await recordingsDirOf(deps, stored.nodeId), orgId, `${uniqueid}.wav`),
    () => new NotFound(RECORDING_NOT_FOUND),
  );
}

/** Where recordings are read from. */
export interface RecordingDirs {
  /** PBX_RECORDINGS_DIR: the one implicit engine's recordings. */
  recordingsDir: string;
  /** PBX_NODES_DIR: each engine node's under `<name>.recordings`. Absent: nodes are not read. */
  nodesDir?: string;
}

/**
 * The recordings directory of the engine that carried a call: its node's, else (no node, or a
 * node since removed) PBX_RECORDINGS_DIR.
 */
async function recordingsDirOf(
  deps: RecordingDirs & { db: Db },
  nodeId: string | null,
): Promise<string> {
  if (nodeId === null || deps.nodesDir === undefined) return deps.recordingsDir;
  const node = await findEngineNode(deps.db, nodeId);
  return node ? nodeRecordingsDir(deps.nodesDir, node.name) : deps.recordingsDir;
}
