// What an engine node's deployer kept for that node alone, left behind by its removal (issue 25,
// docs/nodes.md). `node_applied_revisions` (migration 2980: what each node's engine runs) and
// `node_deploy_requests` (2995: what each node had deployed of an org's requests) have no foreign
// key to `engine_nodes`; until this version a removed node's rows stayed, read by nothing (node
// ids are never reused, and only the nodes holding an org count towards its requests). Since
// this version the removal deletes them in its transaction (`deleteEngineNode`); here the rows
// an earlier version left are deleted the same way. Both dialects: both tables exist in both.
// The node's deploy records (`deploy_records`) stay, as the history of what was deployed there.
// Data only: the down migration has nothing to undo.
import type { Kysely } from "kysely";

// biome-ignore lint/suspicious/noExplicitAny: migrations take whatever handle Kysely gives them
export async function up(db: Kysely<any>): Promise<void> {
  for (const table of ["node_applied_revisions", "node_deploy_requests"]) {
    await db
      .deleteFrom(table)
      .where(({ not, exists, selectFrom }) =>
        not(
          exists(
            selectFrom("engine_nodes")
              .select("engine_nodes.id")
              .whereRef("engine_nodes.id", "=", `${table}.node_id`),
          ),
        ),
      )
      .execute();
  }
}

export async function down(): Promise<void> {}
