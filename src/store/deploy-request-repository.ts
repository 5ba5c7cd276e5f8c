// Deploy requests (migration 2901): the store's record that an org's configuration changed and
// its deploy has not been done yet, so a save on any replica reaches the one replica that
// deploys. One row per org; each save bumps `seq`; the deployer raises `done_seq` to the `seq` a
// successful deploy covered, so a request a dead deployer left is still pending for the next one.
import { sql } from "kysely";
import type { Db } from "./database.js";

export interface DeployRequest {
  orgId: string;
  seq: number;
  /** The replica whose save bumped `seq` last. */
  requestedBy: string;
}

export function createDeployRequestRepository(db: Db) {
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
     * `nodeId`, only the orgs placed on that engine node as their primary (issue 25).
     */
    async pending(nodeId?: string): Promise<DeployRequest[]> {
      let query = db
        .selectFrom("deploy_requests")
        .select(["deploy_requests.org_id", "seq", "requested_by"])
        .whereRef("seq", ">", "done_seq");
      if (nodeId !== undefined) {
        query = query
          .innerJoin("org_placements", "org_placements.org_id", "deploy_requests.org_id")
          .where("org_placements.node_id", "=", nodeId);
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

    /** A deploy that read the store after request `seq` succeeded: requests up to it are done. */
    async done(orgId: string, seq: number): Promise<void> {
      await db
        .updateTable("deploy_requests")
        .set({ done_seq: seq })
        .where("org_id", "=", orgId)
        .where("done_seq", "<", seq)
        .execute();
    },
  };
}

export type DeployRequestRepository = ReturnType<typeof createDeployRequestRepository>;
