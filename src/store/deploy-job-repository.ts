// On-request deploy jobs (migration 2962): queued by a replica that is not the deployer, carried
// out by the deployer-lease holder, answered from the row. See src/deploy/deploy-jobs.ts.
import type { Db } from "./database.js";
import type { DeployJobsTable } from "./schema.js";

export type DeployJobRow = DeployJobsTable;

/** A job as its requester queues it and the deployer reads it back (the columns stay here). */
export interface DeployJob {
  id: string;
  kind: string;
  orgId: string | null;
  trigger: string | null;
  requestedBy: string;
  at: string;
}

function jobOf(row: DeployJobRow): DeployJob {
  return {
    id: row.id,
    kind: row.kind,
    orgId: row.org_id,
    trigger: row.trigger,
    requestedBy: row.requested_by,
    at: row.requested_at,
  };
}

/**
 * The jobs of engine node `nodeId` (issue 25: each node's deployer carries out its own), or of
 * the one implicit engine when absent.
 */
export function createDeployJobRepository(db: Db, nodeId?: string) {
  const node = nodeId ?? null;
  return {
    async add(job: DeployJob): Promise<void> {
      await db
        .insertInto("deploy_jobs")
        .values({
          id: job.id,
          kind: job.kind,
          org_id: job.orgId,
          trigger: job.trigger,
          requested_by: job.requestedBy,
          requested_at: job.at,
          claimed_by: null,
          finished_at: null,
          outcome: null,
          node_id: node,
        })
        .execute();
    },

    /**
     * Unfinished jobs, oldest first: new ones, and those a deployer claimed and did not finish
     * (it lost the lease or died; the deployer carries jobs out one after the other, so none of
     * its own is running when it looks).
     */
    async unfinished(): Promise<DeployJob[]> {
      const rows = await db
        .selectFrom("deploy_jobs")
        .selectAll()
        .where("finished_at", "is", null)
        .where("node_id", node === null ? "is" : "=", node)
        .orderBy("requested_at")
        .execute();
      return rows.map(jobOf);
    },

    /** Claims job `id` for `deployer`; false when it is finished or gone (its requester gave up). */
    async claim(id: string, deployer: string): Promise<boolean> {
      const result = await db
        .updateTable("deploy_jobs")
        .set({ claimed_by: deployer })
        .where("id", "=", id)
        .where("finished_at", "is", null)
        .executeTakeFirst();
      return Number(result.numUpdatedRows) > 0;
    },

    async finish(id: string, outcome: string, at: string): Promise<void> {
      await db
        .updateTable("deploy_jobs")
        .set({ outcome, finished_at: at })
        .where("id", "=", id)
        .execute();
    },

    find(id: string): Promise<DeployJobRow | undefined> {
      return db.selectFrom("deploy_jobs").selectAll().where("id", "=", id).executeTakeFirst();
    },

    /** Removes job `id` (answered); with `unclaimedOnly`, only if no deployer has started it. */
    async remove(id: string, options: { unclaimedOnly?: boolean } = {}): Promise<boolean> {
      let query = db.deleteFrom("deploy_jobs").where("id", "=", id);
      if (options.unclaimedOnly) query = query.where("claimed_by", "is", null);
      const result = await query.executeTakeFirst();
      return Number(result.numDeletedRows) > 0;
    },

    /** Drops finished jobs older than `before` whose requester never came back for them. */
    async removeFinishedBefore(before: string): Promise<void> {
      await db.deleteFrom("deploy_jobs").where("finished_at", "<", before).execute();
    },
  };
}
