// `trunk.registered` / `trunk.failed` (SPEC.md §6) from the engine's outbound registrations.
// The engine's `Registry` event names no org (src/engine/registration-events.ts), so the whole
// list (`PJSIPShowRegistrationsOutbound`, read after each such event and after every login) is
// compared with the statuses last recorded (trunk_registrations, migration 2201), in the
// transaction that writes the outbox: a registration is the org's whose context prefix its
// section name starts with (the compiler names it `<context_prefix>trunk_<name>`,
// src/compiler/pjsip.ts); a name of no org, or not a trunk's, is ignored.
//
// A status that turns `Registered` emits `trunk.registered`; one that turns `Rejected` (the
// registrar refused: 403, 401 with bad credentials, or a temporary refusal Asterisk retries)
// emits `trunk.failed`. Any other change is recorded silently. A re-listing, a refresh of a
// registration or a service restart changes nothing and emits nothing.
import type { Clock } from "../../clock.js";
import type { OutboundRegistration } from "../../engine/registration-events.js";
import type { Db } from "../../store/database.js";
import {
  forgetTrunkRegistration,
  listTrunkRegistrations,
  saveTrunkRegistrationStatus,
  trunkRegistrationStatus,
} from "../../store/trunk-registration-repository.js";
import { emitEvent } from "../webhooks/webhook-events.js";
import type { RefreshingOrgDirectory } from "./call-org.js";

export interface TrunkRegistrationChange {
  orgId: string;
  registration: string;
  emitted: "trunk.registered" | "trunk.failed" | null;
}

const TRUNK_MARK = "trunk_";
const EMITS: Readonly<Record<string, "trunk.registered" | "trunk.failed">> = {
  Registered: "trunk.registered",
  Rejected: "trunk.failed",
};

export class TrunkRegistrationIngest {
  constructor(private readonly options: { db: Db; clock: Clock; orgs: RefreshingOrgDirectory }) {}

  /**
   * Records the engine's whole list of outbound registrations; answers the changes of the orgs'
   * trunks (with the webhook each emitted, if any). Registrations recorded before and missing
   * from the list are forgotten, so a trunk removed and added again reports its next status.
   */
  async ingest(listed: readonly OutboundRegistration[]): Promise<TrunkRegistrationChange[]> {
    const owned: { orgId: string; trunk: string; entry: OutboundRegistration }[] = [];
    for (const entry of listed) {
      const org = await this.options.orgs.ownerOfName(entry.name);
      if (org === null) continue;
      const rest = entry.name.slice(org.context_prefix.length);
      if (!rest.startsWith(TRUNK_MARK) || rest.length === TRUNK_MARK.length) continue;
      owned.push({ orgId: org.id, trunk: rest.slice(TRUNK_MARK.length), entry });
    }
    const now = this.options.clock().toISOString();
    return this.options.db.transaction().execute(async (tx) => {
      const changes: TrunkRegistrationChange[] = [];
      for (const { orgId, trunk, entry } of owned) {
        const previous = await trunkRegistrationStatus(tx, orgId, entry.name);
        if (previous === entry.status) continue;
        await saveTrunkRegistrationStatus(tx, {
          orgId,
          registration: entry.name,
          status: entry.status,
          now,
        });
        const type = EMITS[entry.status] ?? null;
        if (type !== null) {
          const data = {
            trunk,
            registration: entry.name,
            status: entry.status,
            previous_status: previous,
            server_uri: entry.serverUri,
            client_uri: entry.clientUri,
            at: now,
          };
          await emitEvent(tx, orgId, type, data, tx, this.options.clock);
        }
        changes.push({ orgId, registration: entry.name, emitted: type });
      }
      const present = new Set(owned.map((o) => `${o.orgId} ${o.entry.name}`));
      for (const row of await listTrunkRegistrations(tx)) {
        if (!present.has(`${row.org_id} ${row.registration}`)) {
          await forgetTrunkRegistration(tx, row.org_id, row.registration);
        }
      }
      return changes;
    });
  }
}
