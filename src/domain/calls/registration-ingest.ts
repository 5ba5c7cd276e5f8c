// `user.registered` / `user.unregistered` (SPEC.md §6) from the engine's PJSIP contact changes.
// The org is the one whose context prefix the AOR's name starts with (the compiler names a
// user's endpoint and AOR `<context_prefix><extension>`, src/compiler/pjsip.ts); an AOR of no
// org, or one that is not a phone's (a trunk's `<prefix>trunk_<name>`), is ignored.
//
// These events carry no uniqueid, so replays are recognised by state, kept in the store
// (sip_contacts, migration 2101) and changed in the same transaction as the outbox write:
// `user.registered` when the AOR's first contact is recorded, `user.unregistered` when its last
// one is removed. A replayed event, a refresh or reachability change of a known contact, or a
// service restart changes nothing and emits nothing; a second phone registering on the same
// extension emits nothing either.

import type { Clock } from "../../clock.js";
import type { ContactChange } from "../../engine/registration-events.js";
import type { Db } from "../../store/database.js";
import {
  addSipContact,
  countSipContacts,
  removeSipContact,
} from "../../store/sip-contact-repository.js";
import { emitEvent } from "../webhooks/webhook-events.js";
import type { RefreshingOrgDirectory } from "./call-org.js";

export type RegistrationResult =
  | { emitted: "user.registered" | "user.unregistered" | null; orgId: string }
  | { emitted: null; orgId: null };

const EXTENSION = /^[0-9]{2,15}$/;

export class RegistrationIngest {
  constructor(private readonly options: { db: Db; clock: Clock; orgs: RefreshingOrgDirectory }) {}

  /** Records one contact change and emits the webhook it means, if any. */
  async ingest(change: ContactChange): Promise<RegistrationResult> {
    const org = await this.options.orgs.ownerOfName(change.aor);
    if (org === null) return { emitted: null, orgId: null };
    const extension = change.aor.slice(org.context_prefix.length);
    if (!EXTENSION.test(extension)) return { emitted: null, orgId: null };
    const now = this.options.clock().toISOString();
    const key = { orgId: org.id, aor: change.aor, uri: change.uri };
    return this.options.db.transaction().execute(async (tx) => {
      let type: "user.registered" | "user.unregistered" | null = null;
      if (change.change === "present") {
        if (
          (await addSipContact(tx, { ...key, now })) &&
          (await countSipContacts(tx, org.id, change.aor)) === 1
        ) {
          type = "user.registered";
        }
      } else if (
        (await removeSipContact(tx, key)) &&
        (await countSipContacts(tx, org.id, change.aor)) === 0
      ) {
        type = "user.unregistered";
      }
      if (type !== null) {
        const data = {
          extension,
          endpoint: change.endpoint === "" ? change.aor : change.endpoint,
          contact: change.uri,
          at: now,
        };
        await emitEvent(tx, org.id, type, data, tx, this.options.clock);
      }
      return { emitted: type, orgId: org.id };
    });
  }
}
