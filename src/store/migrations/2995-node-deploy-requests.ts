// Warm standby (issue 25, docs/nodes.md): an org is deployed on its primary node and on its
// standby node, each by that node's own deployer, so what each node has deployed of the org's
// requests is kept per node. `deploy_requests.done_seq` stays the org's: raised once every node
// holding the org has covered it (src/store/deploy-request-repository.ts).
import type { Kysely } from "kysely";

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("node_deploy_requests")
    .addColumn("org_id", "varchar(36)", (c) => c.notNull())
    .addColumn("node_id", "varchar(36)", (c) => c.notNull())
    .addColumn("done_seq", "integer", (c) => c.notNull())
    .addPrimaryKeyConstraint("node_deploy_requests_pk", ["org_id", "node_id"])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable("node_deploy_requests").execute();
}
