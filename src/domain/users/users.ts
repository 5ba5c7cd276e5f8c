// SIP users (extensions) of an org: list, create, update, delete, batch create, SIP password
// regeneration and the bot-extension lookup of the ticket intake. Every change follows the same
// order: validate the org as it would be after the change, write in one transaction (extension
// claims included), then schedule the org's deploy.

import { randomUUID } from "node:crypto";
import { withDefaults } from "../../model/defaults.js";
import { QUEUE_TIMEOUT_KINDS } from "../../model/destinations.js";
import { type OrgState, User } from "../../model/org-state.js";
import { USER_FIELDS, type UserView, UserViewSchema } from "../../model/user-views.js";
import { validateOrg } from "../../model/validate.js";
import { viewOf } from "../../model/view-shapes.js";
import type { Db } from "../../store/database.js";
import { loadOrgState } from "../../store/load-org-state.js";
import { createOrganizationRepository } from "../../store/organization-repository.js";
import { createQueueRepository } from "../../store/queue-repository.js";
import { createUserRepository } from "../../store/user-repository.js";
import { changeOrgConfig } from "../config/config-change.js";
import { assertBreaksNothingElse, assertValidAt } from "../config/config-validation.js";
import type { DomainDeps } from "../deps.js";
import { BadRequest, Conflict, NotFound } from "../errors.js";
import {
  claimExtension,
  collisionMessage,
  holderInState,
  releaseExtension,
} from "../routing/extension-space.js";
import { ownRow } from "../tenant-rows.js";
import { generateSipPassword, sipCredential, sipUsernameOf } from "./sip-credentials.js";

export const USER_NOT_FOUND = "User not found";

/** The fields a caller may set; omitted ones take the model's defaults on create. */
export interface UserInput {
  extension: string;
  name: string;
  routing_type?: User["routing_type"];
  status?: User["status"];
  ring_target?: User["ring_target"];
  phone_number?: string | null;
  ring_time?: number;
  outbound_did?: string | null;
  call_recording?: boolean;
  /** Chosen by the caller; generated when omitted. */
  sip_password?: string;
}

/** A partial update: omitted fields keep their value. */
export type UserPatch = Partial<UserInput>;

/** A view plus the plaintext SIP password, returned once. */
export type UserWithPassword = UserView & { sip_password: string };

/** The public shape of a stored user: the view's fields of it (never its SIP credential). */
export function userView(user: User, contextPrefix: string): UserView {
  const sip_username = sipUsernameOf(contextPrefix, user.extension);
  return viewOf(UserViewSchema, { ...user, id: user.id as string, sip_username });
}

async function storedContextPrefix(db: Db, orgId: string): Promise<string> {
  const org = await createOrganizationRepository(db).findById(orgId);
  if (!org) throw new NotFound("Organization not found");
  return org.context_prefix;
}

/** Users of the org ordered by extension. */
// The listing's rows are a cached read (src/store/read-cache.ts): the same array while the store
// is unchanged. Their views are kept beside that array, so a dashboard polling an unchanged
// listing does not rebuild 50 objects per request; a changed store loads a new array, and its
// views are built anew. Views are shared between requests: read-only, as the rows are.
const viewsOfRows = new WeakMap<object, readonly UserView[]>();

export async function listUsers(deps: DomainDeps, orgId: string): Promise<readonly UserView[]> {
  const rows = await createUserRepository(deps.db).listWithContextPrefix(orgId);
  let views = viewsOfRows.get(rows);
  if (!views) {
    // Frozen: the API keeps this listing's pages serialized while it is unchanged
    // (src/api/serialized-pages.ts).
    views = Object.freeze(rows.map(({ user, contextPrefix }) => userView(user, contextPrefix)));
    viewsOfRows.set(rows, views);
  }
  return views;
}

/** One user of the org; 404 when absent, 403 when another org's. */
export async function getUser(deps: DomainDeps, orgId: string, id: string): Promise<UserView> {
  const repo = createUserRepository(deps.db);
  ownRow(await repo.findRowById(id), orgId, USER_NOT_FOUND);
  const user = await repo.findById(orgId, id);
  if (!user) throw new NotFound(USER_NOT_FOUND);
  return userView(user, await storedContextPrefix(deps.db, orgId));
}

/** A complete model user from a create input (model defaults filled in) and its password. */
function newUser(id: string, input: UserInput, contextPrefix: string, password: string): User {
  const { sip_password: _password, ...fields } = input;
  return withDefaults(User, {
    ...fields,
    id,
    sip: sipCredential(contextPrefix, input.extension, password),
  });
}

/** Inserts users already validated against `state`, claiming their extensions. */
async function insertUsers(trx: Db, orgId: string, users: User[]): Promise<void> {
  const repo = createUserRepository(trx);
  for (const user of users) {
    // Claim first: the claim names the holder for the 409 when another request raced us.
    await claimExtension(trx, orgId, user.extension, { type: "user", id: user.id as string });
    await repo.insert(orgId, user);
  }
}

/**
 * Creates a user; the SIP password (given or generated) is in the answer and nowhere else.
 * 409 with SPEC.md §7's message when the extension is taken by a user, queue or IVR.
 */
export async function createUser(
  deps: DomainDeps,
  orgId: string,
  input: UserInput,
): Promise<UserWithPassword> {
  const password = input.sip_password ?? generateSipPassword();
  const { user, prefix } = await changeOrgConfig(deps, orgId, async (trx) => {
    const state = await loadOrgState(trx, orgId);
    const prefix = state.org.context_prefix;
    const user = newUser(randomUUID(), input, prefix, password);
    const holder = holderInState(state, user.extension);
    if (holder) throw new Conflict(collisionMessage(user.extension, holder));
    state.users.push(user);
    assertValidAt(state, `users[${state.users.length - 1}]`);
    await insertUsers(trx, orgId, [user]);
    return { user, prefix };
  });
  return { ...userView(user, prefix), sip_password: password };
}

/** One row of a batch: an input to create, or the problem its shape already has. */
export type BatchRow = { input: UserInput } | { problem: string };

/** A batch refused as a whole, with every bad row by index (0-based, in request order). */
export class BatchRejected extends BadRequest {
  constructor(
    readonly rows: ReadonlyArray<{ index: number; error: string }>,
    total: number,
  ) {
    super(
      `${rows.length} of ${total} rows are invalid; nothing was applied: ${rows
        .map((r) => `users[${r.index}]: ${r.error}`)
        .join("; ")}`,
    );
  }
}

/** The first error-severity problem at `path` in precomputed diagnostics. */
function firstProblemAt(
  diagnostics: ReturnType<typeof validateOrg>,
  path: string,
): string | undefined {
  return diagnostics.find(
    (d) =>
      d.severity === "error" &&
      (d.path === path || d.path.startsWith(`${path}.`) || d.path.startsWith(`${path}[`)),
  )?.message;
}

/**
 * Creates many users at once. Every row is checked first (shape, extension collisions with the
 * org and with earlier rows, the model's rules); any bad row rejects the whole batch with every
 * bad row reported. Otherwise all rows are written in one transaction and one deploy scheduled.
 */
export async function createUsersBatch(
  deps: DomainDeps,
  orgId: string,
  rows: readonly BatchRow[],
): Promise<UserWithPassword[]> {
  const passwords = rows.map((r) =>
    "input" in r ? (r.input.sip_password ?? generateSipPassword()) : "",
  );
  const { users, prefix } = await changeOrgConfig(deps, orgId, async (trx) => {
    const state = await loadOrgState(trx, orgId);
    const prefix = state.org.context_prefix;
    const bad: Array<{ index: number; error: string }> = [];
    const added: Array<{ index: number; at: number; user: User }> = [];
    rows.forEach((row, index) => {
      if ("problem" in row) {
        bad.push({ index, error: row.problem });
        return;
      }
      const user = newUser(randomUUID(), row.input, prefix, passwords[index] as string);
      const holder = holderInState(state, user.extension);
      if (holder) {
        bad.push({ index, error: collisionMessage(user.extension, holder) });
        return;
      }
      state.users.push(user);
      added.push({ index, at: state.users.length - 1, user });
    });
    const diagnostics = validateOrg(state);
    for (const { index, at } of added) {
      const problem = firstProblemAt(diagnostics, `users[${at}]`);
      if (problem) bad.push({ index, error: problem });
    }
    if (bad.length > 0) {
      throw new BatchRejected(
        bad.sort((a, b) => a.index - b.index),
        rows.length,
      );
    }
    const users = added.map((a) => a.user);
    await insertUsers(trx, orgId, users);
    return { users: added, prefix };
  });
  return users.map(({ index, user }) => ({
    ...userView(user, prefix),
    sip_password: passwords[index] as string,
  }));
}

/** The org's state, the user's index in it and the user, inside a transaction. */
async function loadOwnUser(
  trx: Db,
  orgId: string,
  id: string,
): Promise<{ state: OrgState; index: number; user: User }> {
  ownRow(await createUserRepository(trx).findRowById(id), orgId, USER_NOT_FOUND);
  const state = await loadOrgState(trx, orgId);
  const index = state.users.findIndex((u) => u.id === id);
  const user = state.users[index];
  if (!user) throw new NotFound(USER_NOT_FOUND);
  return { state, index, user };
}

/** Points the in-memory queue memberships and `user` timeouts at a renamed extension. */
function renameInQueues(state: OrgState, from: string, to: string): void {
  for (const queue of state.queues) {
    for (const member of queue.members) if (member.extension === from) member.extension = to;
    const timesOutToUser = QUEUE_TIMEOUT_KINDS[queue.timeout_destination_type] === "user";
    if (timesOutToUser && queue.timeout_destination === from) {
      queue.timeout_destination = to;
    }
  }
}

/**
 * Applies a partial update. A changed extension is re-claimed, follows into the org's queues
 * (memberships, `user` timeouts) and changes the SIP username, so the user gets a new SIP
 * password (the caller's `sip_password`, or a generated one returned once as `sip_password`).
 * Refused with 400 when it would break another resource (an IVR option or DID naming the user).
 */
export async function updateUser(
  deps: DomainDeps,
  orgId: string,
  id: string,
  patch: UserPatch,
): Promise<UserView & { sip_password?: string }> {
  const result = await changeOrgConfig(deps, orgId, async (trx) => {
    const { state: before, index, user: current } = await loadOwnUser(trx, orgId, id);
    const prefix = before.org.context_prefix;
    const next: User = { ...current };
    for (const key of USER_FIELDS) {
      if (patch[key] !== undefined) (next as Record<string, unknown>)[key] = patch[key];
    }
    const extensionChanged = next.extension !== current.extension;
    let generated: string | undefined;
    if (patch.sip_password !== undefined) {
      next.sip = sipCredential(prefix, next.extension, patch.sip_password);
    } else if (extensionChanged) {
      generated = generateSipPassword();
      next.sip = sipCredential(prefix, next.extension, generated);
    }
    const after = structuredClone(before);
    after.users[index] = next;
    if (extensionChanged) {
      const holder = holderInState(before, next.extension, { type: "user", id });
      if (holder) throw new Conflict(collisionMessage(next.extension, holder));
      renameInQueues(after, current.extension, next.extension);
    }
    assertValidAt(after, `users[${index}]`);
    assertBreaksNothingElse(
      before,
      after,
      `users[${index}]`,
      `Cannot change user '${current.name}'`,
    );
    if (extensionChanged) {
      await releaseExtension(trx, orgId, current.extension, { type: "user", id });
      await claimExtension(trx, orgId, next.extension, { type: "user", id });
      await createQueueRepository(trx, deps.clock).renameUserExtension(
        orgId,
        current.extension,
        next.extension,
      );
    }
    await createUserRepository(trx, deps.clock).update(orgId, id, next);
    return { user: next, prefix, generated };
  });
  const view = userView(result.user, result.prefix);
  return result.generated === undefined ? view : { ...view, sip_password: result.generated };
}

/**
 * Deletes a user: its endpoint and dialplan entries go with the next deploy, its queue
 * memberships with it, its extension is freed. Refused with 400 while an IVR option, a DID or a
 * queue timeout still leads to it. Call records are not touched.
 */
export async function deleteUser(deps: DomainDeps, orgId: string, id: string): Promise<void> {
  await changeOrgConfig(deps, orgId, async (trx) => {
    const { state: before, user } = await loadOwnUser(trx, orgId, id);
    const after = structuredClone(before);
    after.users = after.users.filter((u) => u.id !== id);
    for (const queue of after.queues) {
      queue.members = queue.members.filter((m) => m.extension !== user.extension);
    }
    assertBreaksNothingElse(before, after, null, `Cannot delete user '${user.name}'`);
    await createQueueRepository(trx, deps.clock).removeMemberships(orgId, user.extension);
    await createUserRepository(trx, deps.clock).delete(orgId, id);
    await releaseExtension(trx, orgId, user.extension, { type: "user", id });
  });
}

/** Replaces the user's SIP password with a new random one, returned once. */
export async function regenerateSipPassword(
  deps: DomainDeps,
  orgId: string,
  id: string,
): Promise<UserWithPassword> {
  const password = generateSipPassword();
  const result = await changeOrgConfig(deps, orgId, async (trx) => {
    const { state, user } = await loadOwnUser(trx, orgId, id);
    const prefix = state.org.context_prefix;
    const next: User = { ...user, sip: sipCredential(prefix, user.extension, password) };
    await createUserRepository(trx, deps.clock).update(orgId, id, next);
    return { user: next, prefix };
  });
  return { ...userView(result.user, result.prefix), sip_password: password };
}

/** Extensions of the org's active `ai_agent` users, ascending (the ticket intake's bot list). */
export async function botExtensions(
  deps: DomainDeps,
  orgId: string,
): Promise<{ extensions: string[] }> {
  await storedContextPrefix(deps.db, orgId);
  const extensions = await createUserRepository(deps.db).listExtensions(orgId, {
    routingType: "ai_agent",
    status: "active",
  });
  return { extensions };
}
