// An engine node named by an admin: its id (the API's paths) or its name (`pbxctl nodes`).

import type { EngineNodeRecord } from "../../model/stored-records.js";
import type { Db } from "../../store/database.js";
import { findEngineNode, findEngineNodeByName } from "../../store/engine-node-repository.js";
import { NotFound } from "../errors.js";

export const NODE_NOT_FOUND = "Engine node not found";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The node `ref` names (an id or a name); 404 `Engine node not found` otherwise. */
export async function findNodeRow(db: Db, ref: string): Promise<EngineNodeRecord> {
  const row = UUID.test(ref) ? await findEngineNode(db, ref) : await findEngineNodeByName(db, ref);
  if (!row) throw new NotFound(NODE_NOT_FOUND);
  return row;
}
