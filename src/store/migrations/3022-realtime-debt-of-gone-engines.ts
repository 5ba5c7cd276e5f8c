// Realtime PJSIP changes owed to engines that no longer exist (docs/nodes.md "Realtime PJSIP with
// several nodes"). Since this version a removed node's `pjsip_realtime_pending` rows go with it
// and the first node takes over the implicit engine's, each in the transaction that changes the
// nodes; rows an earlier version left behind would stay, and `pbxctl status` list them as owed,
// for good. Here they are settled as the new code would have: with nodes defined, the implicit
// engine's objects go to the node their org is placed on (an expiry sent twice is harmless), and
// what is left (an org gone since, or a node removed) is deleted, no deployer ever taking it.
// Without nodes the implicit engine's rows are its live queue and stay. PostgreSQL only, as 2950.
// Data only: the down migration has nothing to undo.
import { type Kysely, sql } from "kysely";
import { storeDialect } from "../dialect.js";

// biome-ignore lint/suspicious/noExplicitAny: migrations take whatever handle Kysely gives them
export async function up(db: Kysely<any>): Promise<void> {
  if (storeDialect(db) !== "postgres") return;
  await sql`
    insert into pjsip_realtime_pending (node_id, kind, id, org_id, seq, queued_at)
    select p.node_id, q.kind, q.id, q.org_id, nextval('pjsip_realtime_pending_seq'), q.queued_at
    from pjsip_realtime_pending q
    join org_placements p on p.org_id = q.org_id
    where q.node_id = ''
    on conflict (node_id, kind, id) do nothing`.execute(db);
  await sql`
    delete from pjsip_realtime_pending q
    where (q.node_id = '' and exists (select 1 from engine_nodes))
       or (q.node_id <> '' and not exists (select 1 from engine_nodes n where n.id = q.node_id))`.execute(
    db,
  );
}

export async function down(): Promise<void> {}
