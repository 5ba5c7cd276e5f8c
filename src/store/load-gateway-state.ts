// Builds the inbound dispatcher's input: every assigned pool DID of every active org, by org,
// orgs by context prefix and numbers ascending, so the gateway file is deterministic.
import type { GatewayOrg, GatewayState } from "../model/org-state.js";
import { uriHost } from "../model/wireguard.js";
import { stagingTunnels } from "./customer-tunnel-repository.js";
import type { Db } from "./database.js";
import { SERVED_ORG_STATUS } from "./organization-repository.js";

/** The GatewayState of the store for one deployment `environment`. */
export async function loadGatewayState(
  db: Db,
  options: Pick<GatewayState, "environment" | "staging_endpoint">,
): Promise<GatewayState> {
  const rows = await db
    .selectFrom("dids")
    .innerJoin("organizations", "organizations.id", "dids.org_id")
    .select([
      "organizations.id as org_id",
      "organizations.context_prefix",
      "dids.number",
      "dids.routing_environment",
    ])
    .where("organizations.status", "=", SERVED_ORG_STATUS)
    .where("dids.pool_status", "=", "assigned")
    // An org's own numbers (`POST /dids`) come over its own trunks, never the gateway.
    .where("dids.source", "=", "pool")
    .where("dids.status", "=", "active")
    .orderBy("organizations.context_prefix")
    .orderBy("dids.number")
    .execute();
  const orgs: GatewayOrg[] = [];
  for (const row of rows) {
    let org = orgs.at(-1);
    if (org?.org_id !== row.org_id) {
      org = { org_id: row.org_id, context_prefix: row.context_prefix, dids: [] };
      orgs.push(org);
    }
    org.dids.push({
      number: row.number,
      routing_environment:
        row.routing_environment as GatewayOrg["dids"][number]["routing_environment"],
    });
  }
  // An org's staging tunnel (`/customer-tunnels`) names where its staging DIDs are dialled.
  const tunnels = new Map(
    (await stagingTunnels(db)).map((t) => [
      t.org_id,
      { host: uriHost(t.customer_address), port: t.staging_sip_port },
    ]),
  );
  for (const org of orgs) {
    const tunnel = tunnels.get(org.org_id);
    if (tunnel) org.staging_tunnel = tunnel;
  }
  return { ...options, orgs };
}
