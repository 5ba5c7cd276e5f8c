// Journey events in the order they were stored (their row id), for `pbxctl calls tail`: what
// arrived after a given row, of one org or of all. Rows exist only for a channel rule 3 gave to
// an org, so "all orgs" never shows a call no org owns.
import type { CallEventRow } from "./call-tables.js";
import type { Db } from "./database.js";

/** Up to `limit` events stored after row `afterId`, oldest first; one org's when `orgId`. */
export async function callEventsAfter(
  db: Db,
  options: { orgId: string | null; afterId: number; limit: number },
): Promise<CallEventRow[]> {
  let query = db.selectFrom("call_events").selectAll().where("id", ">", options.afterId);
  if (options.orgId !== null) query = query.where("org_id", "=", options.orgId);
  return query.orderBy("id").limit(options.limit).execute();
}

/** The id of the row before the last `count` events (of the org when given): where a tail starts. */
export async function tailStartId(db: Db, orgId: string | null, count: number): Promise<number> {
  let query = db.selectFrom("call_events").select("id");
  if (orgId !== null) query = query.where("org_id", "=", orgId);
  const rows = await query
    .orderBy("id", "desc")
    .limit(count + 1)
    .execute();
  if (rows.length <= count) return 0;
  return rows[rows.length - 1]!.id;
}

/** Whether the store holds any engine call event or call record at all, of any org. */
export async function anyCallRecorded(db: Db): Promise<boolean> {
  const [event, record] = await Promise.all([
    db.selectFrom("call_events").select("id").limit(1).executeTakeFirst(),
    db.selectFrom("call_records").select("id").limit(1).executeTakeFirst(),
  ]);
  return event !== undefined || record !== undefined;
}
