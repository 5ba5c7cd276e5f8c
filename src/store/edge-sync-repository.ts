// What the SIP edge is owed and what it took (migration 2991). A change that moves routing bumps
// its scope's `seq` in the change's own transaction (`requestEdgePush`); the edge-sync lease holder
// reads the pending scopes, pushes, and raises `done_seq` to what its push covered. The scope of
// an org's own change is the org id; nodes and placements share the scope `nodes`.
import { sql } from "kysely";
import type { Db } from "./database.js";

export interface EdgeSyncRequestsTable {
  scope: string;
  seq: number;
  done_seq: number;
}

export interface EdgeAppliesTable {
  edge: string;
  revision: string | null;
  applied_at: string | null;
  error: string | null;
  attempted_at: string;
}

/** The scope of node and placement changes (every org's entry may move). */
export const NODES_SCOPE = "nodes";

export interface EdgeRequest {
  scope: string;
  seq: number;
}

/** What an edge last took, and the last push's failure. */
export interface EdgeApplied {
  revision: string | null;
  appliedAt: string | null;
  error: string | null;
  attemptedAt: string;
}

/** Records, through `db` (the change's transaction), that `scope` changed what the edge routes. */
export async function requestEdgePush(db: Db, scope: string): Promise<void> {
  await db
    .insertInto("edge_requests")
    .values({ scope, seq: 1, done_seq: 0 })
    .onConflict((oc) =>
      oc.column("scope").doUpdateSet((eb) => ({
        seq: sql<number>`${eb.ref("edge_requests.seq")} + 1`,
      })),
    )
    .execute();
}

export function createEdgeSyncRepository(db: Db) {
  return {
    /** Every scope changed since the edge last took it (a short list). */
    async pending(): Promise<EdgeRequest[]> {
      const rows = await db
        .selectFrom("edge_requests")
        .select(["scope", "seq"])
        .whereRef("seq", ">", "done_seq")
        .execute();
      return rows.map((row) => ({ scope: row.scope, seq: Number(row.seq) }));
    },

    /** A push that read the store after these requests was applied: they are done. */
    async done(requests: readonly EdgeRequest[]): Promise<void> {
      for (const { scope, seq } of requests) {
        await db
          .updateTable("edge_requests")
          .set({ done_seq: seq })
          .where("scope", "=", scope)
          .where("done_seq", "<", seq)
          .execute();
      }
    },

    /** The edge at `edge` (its directory) holds the tables of `revision`, read back at `at`. */
    async applied(edge: string, revision: string, at: string): Promise<void> {
      const row = { edge, revision, applied_at: at, error: null, attempted_at: at };
      await db
        .insertInto("edge_applies")
        .values(row)
        .onConflict((oc) =>
          oc
            .column("edge")
            .doUpdateSet({ revision, applied_at: at, error: null, attempted_at: at }),
        )
        .execute();
    },

    /** A push to `edge` failed at `at`; what it last took stays recorded. */
    async failed(edge: string, error: string, at: string): Promise<void> {
      await db
        .insertInto("edge_applies")
        .values({ edge, revision: null, applied_at: null, error, attempted_at: at })
        .onConflict((oc) => oc.column("edge").doUpdateSet({ error, attempted_at: at }))
        .execute();
    },

    /** What `edge` last took; null when nothing was ever pushed to it. */
    async status(edge: string): Promise<EdgeApplied | null> {
      const row = await db
        .selectFrom("edge_applies")
        .selectAll()
        .where("edge", "=", edge)
        .executeTakeFirst();
      return row
        ? {
            revision: row.revision,
            appliedAt: row.applied_at,
            error: row.error,
            attemptedAt: row.attempted_at,
          }
        : null;
    },
  };
}

export type EdgeSyncRepository = ReturnType<typeof createEdgeSyncRepository>;

/** A scope's counter and what the edge has taken of it (0/0 when it never changed). */
export async function edgeRequestOf(
  db: Db,
  scope: string,
): Promise<EdgeRequest & { done: number }> {
  const row = await db
    .selectFrom("edge_requests")
    .select(["seq", "done_seq"])
    .where("scope", "=", scope)
    .executeTakeFirst();
  return { scope, seq: Number(row?.seq ?? 0), done: Number(row?.done_seq ?? 0) };
}
