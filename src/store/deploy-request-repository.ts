// Deploy requests (migration 2901): the store's record that an org's configuration changed and
// its deploy has not been done yet, so a save on any replica reaches the one replica that
// deploys. One row per org; each save bumps `seq`; the deployer raises `done_seq` to the `seq` a
// successful deploy covered, so a request a dead deployer left is still pending for the next one.
//
// With engine nodes (issue 25) an org is deployed by every node holding it (its primary, its
// warm standby, the sides of its move), each by its own deployer, possibly on different replicas: each node's progress
// is its own row of `node_deploy_requests` (migration 2995), and the org's `done_seq` is raised
// only to what every node holding it has covered. A node with no row yet counts as having covered
// the org's `done_seq` (what it held before the standby existed was its start-up deploy's job; a
// node that newly holds an org is given a deploy by the node runtimes when the placement moves).
import { sql } from "kysely";
import type { Db } from "./database.js";
import { holdsOrg, orgHolders } from "./engine-node-repository.js";

export interface DeployRequest {
  orgId: string;
  seq: number;
  /** The replica whose save bumped `seq` last. */
  requestedBy: string;
}

export function createDeployRequestRepository(db: Db) {
  async function raiseDone(orgId: string, seq: number): Promise<void> {
    await db
      .updateTable("deploy_requests")
      .set({ done_seq: seq })
      .where("org_id", "=", orgId)
      .where("done_seq", "<", seq)
      .execute();
  }

  return {
    /** Records a save of `orgId`'s configuration by `replicaId` at `at`. */
    async request(orgId: string, replicaId: string, at: string): Promise<void> {
      await db
        .insertInto("deploy_requests")
        .values({ org_id: orgId, seq: 1, requested_by: replicaId, requested_at: at })
        .onConflict((oc) =>
          oc.column("org_id").doUpdateSet((eb) => ({
            seq: sql<number>`${eb.ref("deploy_requests.seq")} + 1`,
            requested_by: eb.ref("excluded.requested_by"),
            requested_at: eb.ref("excluded.requested_at"),
          })),
        )
        .execute();
    },

    /**
     * Every org with a deploy not done yet (those saved since the last poll: a short list); with
     * `nodeId`, only the orgs that engine node holds (primary or standby) and has not deployed.
     */
    async pending(nodeId?: string): Promise<DeployRequest[]> {
      let query = db
        .selectFrom("deploy_requests")
        .select(["deploy_requests.org_id", "deploy_requests.seq", "requested_by"])
        .whereRef("deploy_requests.seq", ">", "deploy_requests.done_seq");
      if (nodeId !== undefined) {
        query = query
          .innerJoin("org_placements", "org_placements.org_id", "deploy_requests.org_id")
          .leftJoin("node_deploy_requests", (join) =>
            join
              .onRef("node_deploy_requests.org_id", "=", "deploy_requests.org_id")
              .on("node_deploy_requests.node_id", "=", nodeId),
          )
          .where(holdsOrg(nodeId))
          .where(
            sql<boolean>`deploy_requests.seq > coalesce(node_deploy_requests.done_seq, deploy_requests.done_seq)`,
          );
      }
      const rows = await query.execute();
      return rows.map((row) => ({
        orgId: row.org_id,
        seq: Number(row.seq),
        requestedBy: row.requested_by,
      }));
    },

    /** The org's request counter now (0: never requested). */
    async seqOf(orgId: string): Promise<number> {
      const row = await db
        .selectFrom("deploy_requests")
        .select("seq")
        .where("org_id", "=", orgId)
        .executeTakeFirst();
      return row ? Number(row.seq) : 0;
    },

    /** Whether a deploy of the org is requested and not done. */
    async isPending(orgId: string): Promise<boolean> {
      const row = await db
        .selectFrom("deploy_requests")
        .select("org_id")
        .where("org_id", "=", orgId)
        .whereRef("seq", ">", "done_seq")
        .executeTakeFirst();
      return row !== undefined;
    },

    /**
     * A deploy that read the store after request `seq` succeeded: requests up to it are done (on
     * `nodeId`, for a node's deployer: the org's requests are done once every node holding it
     * has covered them).
     */
    async done(orgId: string, seq: number, nodeId?: string): Promise<void> {
      if (nodeId === undefined) return raiseDone(orgId, seq);
      await db
        .insertInto("node_deploy_requests")
        .values({ org_id: orgId, node_id: nodeId, done_seq: seq })
        .onConflict((oc) =>
          oc
            .columns(["org_id", "node_id"])
            .doUpdateSet({ done_seq: seq })
            .where("node_deploy_requests.done_seq", "<", seq),
        )
        .execute();
      // Read after this node's row is written: of two nodes finishing at once, the later reader
      // sees both rows, so the org's request is closed by one of them.
      const holders = await orgHolders(db, orgId);
      if (holders.length === 0) return raiseDone(orgId, seq);
      const rows = await db
        .selectFrom("node_deploy_requests")
        .select(["node_id", "done_seq"])
        .where("org_id", "=", orgId)
        .where("node_id", "in", holders)
        .execute();
      if (rows.length < holders.length) return;
      await raiseDone(orgId, Math.min(...rows.map((row) => Number(row.done_seq))));
    },
  };
}

export type DeployRequestRepository = ReturnType<typeof createDeployRequestRepository>;

/**
 * What node `nodeId` had deployed of each org's requests goes with the node, in the transaction
 * that removes it: only the nodes holding an org count towards its `done_seq`, and a removed node
 * holds none (its removal is refused until then).
 */
export async function forgetRequestsOfNode(trx: Db, nodeId: string): Promise<void> {
  await trx.deleteFrom("node_deploy_requests").where("node_id", "=", nodeId).execute();
}
