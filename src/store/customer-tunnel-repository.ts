// Customer tunnel rows (migration 2502). Sealed columns hold `encrypt()` output; the domain opens
// them only to render the config of the side that owns the key. Rows map to the model's
// CustomerTunnelRecord here, once: networks as a list, staging as a boolean.
import type { CustomerTunnelRecord } from "../model/org-views.js";
import type { Db } from "./database.js";

export interface CustomerTunnelsTable {
  id: string;
  org_id: string;
  name: string;
  interface: string;
  listen_port: number;
  gateway_address: string;
  customer_address: string;
  gateway_endpoint: string;
  customer_endpoint: string | null;
  /** JSON array of CIDR ranges. */
  customer_networks: string;
  keepalive: number;
  /** 0/1. */
  staging: number;
  staging_sip_port: number;
  gateway_public_key: string;
  customer_public_key: string;
  gateway_private_key: string;
  customer_private_key: string;
  preshared_key: string;
  created_at: string;
  updated_at: string;
}

function recordFromRow(row: CustomerTunnelsTable): CustomerTunnelRecord {
  const { customer_networks, staging, ...rest } = row;
  return {
    ...rest,
    customer_networks: JSON.parse(customer_networks) as string[],
    staging: staging === 1,
  };
}

function rowFromRecord(record: CustomerTunnelRecord): CustomerTunnelsTable {
  const { customer_networks, staging, ...rest } = record;
  return {
    ...rest,
    customer_networks: JSON.stringify(customer_networks),
    staging: staging ? 1 : 0,
  };
}

/** Every tunnel (of one org when `orgId` is given), oldest first. */
export async function listCustomerTunnels(db: Db, orgId?: string): Promise<CustomerTunnelRecord[]> {
  let query = db.selectFrom("customer_tunnels").selectAll();
  if (orgId !== undefined) query = query.where("org_id", "=", orgId);
  return (await query.orderBy("created_at").orderBy("id").execute()).map(recordFromRow);
}

export async function findCustomerTunnel(
  db: Db,
  id: string,
): Promise<CustomerTunnelRecord | undefined> {
  const row = await db
    .selectFrom("customer_tunnels")
    .selectAll()
    .where("id", "=", id)
    .executeTakeFirst();
  return row && recordFromRow(row);
}

export async function insertCustomerTunnel(db: Db, record: CustomerTunnelRecord): Promise<void> {
  await db.insertInto("customer_tunnels").values(rowFromRecord(record)).execute();
}

/** Replaces the editable columns of a tunnel (never its keys, org or interface). */
export async function updateCustomerTunnel(db: Db, record: CustomerTunnelRecord): Promise<void> {
  const row = rowFromRecord(record);
  await db
    .updateTable("customer_tunnels")
    .set({
      name: row.name,
      listen_port: row.listen_port,
      gateway_address: row.gateway_address,
      customer_address: row.customer_address,
      gateway_endpoint: row.gateway_endpoint,
      customer_endpoint: row.customer_endpoint,
      customer_networks: row.customer_networks,
      keepalive: row.keepalive,
      staging: row.staging,
      staging_sip_port: row.staging_sip_port,
      updated_at: row.updated_at,
    })
    .where("id", "=", row.id)
    .execute();
}

/** Clears the staging mark of the org's tunnels other than `keepId` (one staging tunnel per org). */
export async function clearStagingExcept(db: Db, orgId: string, keepId: string): Promise<void> {
  await db
    .updateTable("customer_tunnels")
    .set({ staging: 0 })
    .where("org_id", "=", orgId)
    .where("id", "!=", keepId)
    .execute();
}

export async function deleteCustomerTunnel(db: Db, id: string): Promise<void> {
  await db.deleteFrom("customer_tunnels").where("id", "=", id).execute();
}

/** The staging tunnel of each org that has one: org id -> customer address and SIP port. */
export async function stagingTunnels(
  db: Db,
): Promise<{ org_id: string; customer_address: string; staging_sip_port: number }[]> {
  return db
    .selectFrom("customer_tunnels")
    .select(["org_id", "customer_address", "staging_sip_port"])
    .where("staging", "=", 1)
    .orderBy("org_id")
    .execute();
}

/** The org's staging tunnel, if it has one. */
export async function stagingTunnelOf(
  db: Db,
  orgId: string,
): Promise<{ customer_address: string; staging_sip_port: number } | undefined> {
  return db
    .selectFrom("customer_tunnels")
    .select(["customer_address", "staging_sip_port"])
    .where("org_id", "=", orgId)
    .where("staging", "=", 1)
    .executeTakeFirst();
}
