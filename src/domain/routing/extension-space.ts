// One extension space per org (SPEC.md §7): users, queue numbers and IVR extensions share it.
// The claim table (`extension_claims`) is the final word when two requests race; these helpers
// claim and release in the caller's transaction and speak SPEC.md §7's 409 messages.

import type { OrgState } from "../../model/org-state.js";
import { extensionCollisionMessage } from "../../model/validate.js";
import type { Db } from "../../store/database.js";
import {
  createExtensionClaimRepository,
  type ExtensionOwner,
  type ExtensionOwnerType,
} from "../../store/extension-claim-repository.js";
import { Conflict } from "../errors.js";

export type { ExtensionOwner, ExtensionOwnerType };

/** SPEC.md §7: what a 409 says about the holder of an extension. */
export const collisionMessage = extensionCollisionMessage;

/** Who in `state` holds `extension`, other than `self`; undefined when it is free. */
export function holderInState(
  state: OrgState,
  extension: string,
  self?: ExtensionOwner,
): { type: ExtensionOwnerType; name: string } | undefined {
  const isSelf = (type: ExtensionOwnerType, id: string | undefined) =>
    self !== undefined && self.type === type && self.id === id;
  const user = state.users.find((u) => u.extension === extension && !isSelf("user", u.id));
  if (user) return { type: "user", name: user.name };
  const queue = state.queues.find((q) => q.number === extension && !isSelf("queue", q.id));
  if (queue) return { type: "queue", name: queue.name };
  const ivr = state.ivrs.find((i) => i.extension === extension && !isSelf("ivr", i.id));
  if (ivr) return { type: "ivr", name: ivr.name };
  return undefined;
}

/**
 * Claims `extension` for `owner` in the caller's transaction; throws Conflict with the SPEC.md §7
 * message when someone else holds it.
 */
export async function claimExtension(
  trx: Db,
  orgId: string,
  extension: string,
  owner: ExtensionOwner,
): Promise<void> {
  const result = await createExtensionClaimRepository(trx).claim(orgId, extension, owner);
  if (!result.claimed) throw new Conflict(collisionMessage(extension, result.holder));
}

/** Releases `extension` held by `owner` (in the caller's transaction). */
export async function releaseExtension(
  trx: Db,
  orgId: string,
  extension: string,
  owner: ExtensionOwner,
): Promise<void> {
  await createExtensionClaimRepository(trx).release(orgId, extension, owner);
}

/**
 * Replaces every claim of the org with one per user, queue and IVR of `state` (apply, after
 * every extension moved); throws Conflict on the first extension held twice.
 */
export async function reclaimAllExtensions(trx: Db, orgId: string, state: OrgState): Promise<void> {
  await createExtensionClaimRepository(trx).releaseAll(orgId);
  const owners: [string, ExtensionOwner][] = [
    ...state.users.map((u): [string, ExtensionOwner] => [u.extension, { type: "user", id: u.id! }]),
    ...state.ivrs.map((i): [string, ExtensionOwner] => [i.extension, { type: "ivr", id: i.id! }]),
    ...state.queues.map((q): [string, ExtensionOwner] => [q.number, { type: "queue", id: q.id! }]),
  ];
  for (const [extension, owner] of owners) await claimExtension(trx, orgId, extension, owner);
}
