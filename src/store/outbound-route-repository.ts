// Outbound routes of an org with their dial patterns, in the OrgState shape (trunk by name).
import { randomUUID } from "node:crypto";
import { type Clock, systemClock } from "../clock.js";
import type { OutboundRoute } from "../model/org-state.js";
import type { Db } from "./database.js";

/** Repository of outbound routes over a database or a transaction. */
export function createOutboundRouteRepository(db: Db, clock: Clock = systemClock) {
  /** The org's trunk named `name` (routes name their trunk as in OrgState); throws when absent. */
  async function trunkOf(orgId: string, name: string): Promise<{ id: string }> {
    const trunk = await db
      .selectFrom("trunks")
      .select("id")
      .where("org_id", "=", orgId)
      .where("name", "=", name)
      .executeTakeFirst();
    if (!trunk) throw new Error(`trunk '${name}' does not exist in org ${orgId}`);
    return trunk;
  }

  async function insertPatterns(routeId: string, patterns: readonly string[]): Promise<void> {
    await db
      .insertInto("outbound_route_patterns")
      .values(
        patterns.map((pattern, position) => ({
          id: randomUUID(),
          route_id: routeId,
          pattern,
          position,
        })),
      )
      .execute();
  }

  return {
    /**
     * Inserts a route after the org's existing ones; its trunk is named as in OrgState and must
     * exist in the same org (else throws).
     */
    async insert(orgId: string, route: OutboundRoute): Promise<OutboundRoute & { id: string }> {
      const trunk = await trunkOf(orgId, route.trunk);
      const last = await db
        .selectFrom("outbound_routes")
        .select((eb) => eb.fn.max("position").as("position"))
        .where("org_id", "=", orgId)
        .executeTakeFirst();
      const id = route.id ?? randomUUID();
      const now = clock().toISOString();
      await db
        .insertInto("outbound_routes")
        .values({
          id,
          org_id: orgId,
          name: route.name,
          trunk_id: trunk.id,
          strip_digits: route.strip_digits,
          prepend_digits: route.prepend_digits,
          caller_id_override: route.caller_id_override,
          position: (last?.position ?? -1) + 1,
          created_at: now,
          updated_at: now,
        })
        .execute();
      await insertPatterns(id, route.patterns);
      return { ...route, id };
    },

    /** The route `id` (trunk by name) and its owner, whoever owns it. */
    async findById(
      id: string,
    ): Promise<{ org_id: string; route: OutboundRoute & { id: string } } | undefined> {
      const row = await db
        .selectFrom("outbound_routes")
        .select("org_id")
        .where("id", "=", id)
        .executeTakeFirst();
      if (!row) return undefined;
      const route = (await this.listByOrg(row.org_id)).find((r) => r.id === id);
      return route && { org_id: row.org_id, route: { ...route, id } };
    },

    /** Names of the org's routes that send calls through trunk `trunkId`, by position. */
    async namesUsingTrunk(trunkId: string): Promise<string[]> {
      const rows = await db
        .selectFrom("outbound_routes")
        .select("name")
        .where("trunk_id", "=", trunkId)
        .orderBy("position")
        .execute();
      return rows.map((r) => r.name);
    },

    /**
     * Rewrites route `id` (keeping its position); its trunk is named as in OrgState and must
     * exist in the same org (else throws). Patterns are replaced as a whole.
     */
    async replace(orgId: string, id: string, route: OutboundRoute): Promise<void> {
      const trunk = await trunkOf(orgId, route.trunk);
      await db
        .updateTable("outbound_routes")
        .set({
          name: route.name,
          trunk_id: trunk.id,
          strip_digits: route.strip_digits,
          prepend_digits: route.prepend_digits,
          caller_id_override: route.caller_id_override,
          updated_at: clock().toISOString(),
        })
        .where("id", "=", id)
        .execute();
      await db.deleteFrom("outbound_route_patterns").where("route_id", "=", id).execute();
      await insertPatterns(id, route.patterns);
    },

    /** Sets the match order: `ids[0]` is tried first. */
    async reorder(ids: readonly string[]): Promise<void> {
      for (const [position, id] of ids.entries()) {
        await db.updateTable("outbound_routes").set({ position }).where("id", "=", id).execute();
      }
    },

    /** Deletes route `id` with its patterns. */
    async delete(id: string): Promise<void> {
      await db.deleteFrom("outbound_route_patterns").where("route_id", "=", id).execute();
      await db.deleteFrom("outbound_routes").where("id", "=", id).execute();
    },

    /** Routes of the org in their stored order, patterns in order. */
    async listByOrg(orgId: string): Promise<OutboundRoute[]> {
      const rows = await db
        .selectFrom("outbound_routes")
        .innerJoin("trunks", "trunks.id", "outbound_routes.trunk_id")
        .selectAll("outbound_routes")
        .select("trunks.name as trunk_name")
        .where("outbound_routes.org_id", "=", orgId)
        .orderBy("outbound_routes.position")
        .orderBy("outbound_routes.id")
        .execute();
      if (rows.length === 0) return [];
      const patterns = await db
        .selectFrom("outbound_route_patterns")
        .selectAll()
        .where(
          "route_id",
          "in",
          rows.map((r) => r.id),
        )
        .orderBy("route_id")
        .orderBy("position")
        .execute();
      return rows.map((row) => ({
        id: row.id,
        name: row.name,
        patterns: patterns.filter((p) => p.route_id === row.id).map((p) => p.pattern),
        trunk: row.trunk_name,
        strip_digits: row.strip_digits,
        prepend_digits: row.prepend_digits,
        caller_id_override: row.caller_id_override,
      }));
    },
  };
}

export type OutboundRouteRepository = ReturnType<typeof createOutboundRouteRepository>;
