// Call queues of an org and their members. A queue number shares the org's extension space with
// users and IVRs. The timeout destination is a pair (type + destination) written together. Every
// change: validate the org as it would be after it, write in one transaction, schedule the deploy.
import { randomUUID } from "node:crypto";
import { withDefaults } from "../../model/defaults.js";
import { type OrgState, Queue, QueueMember } from "../../model/org-state.js";
import type { Db } from "../../store/database.js";
import { loadOrgState } from "../../store/load-org-state.js";
import { createQueueRepository } from "../../store/queue-repository.js";
import { changeOrgConfig } from "../config/config-change.js";
import { assertBreaksNothingElse, assertValidAt } from "../config/config-validation.js";
import type { DomainDeps } from "../deps.js";
import { BadRequest, Conflict, NotFound } from "../errors.js";
import { ownRow } from "../tenant-rows.js";
import {
  claimExtension,
  collisionMessage,
  holderInState,
  releaseExtension,
} from "./extension-space.js";

export const QUEUE_NOT_FOUND = "Queue not found";
export const MEMBER_NOT_FOUND = "Queue member not found";
export const TIMEOUT_PAIR =
  "timeout_destination_type and timeout_destination must be given together";

export type TimeoutType = Queue["timeout_destination_type"];

export interface MemberInput {
  extension: string;
  penalty?: number;
  ring_time?: number;
}

/** The fields a caller may set on create; omitted ones take the model's defaults. */
export interface QueueInput {
  number: string;
  name: string;
  strategy?: Queue["strategy"];
  moh?: string;
  max_wait?: number;
  timeout_destination_type?: TimeoutType;
  timeout_destination?: string | null;
  members?: MemberInput[];
}

/** A partial update of the queue's own fields (members have their own operations). */
export type QueuePatch = Partial<Omit<QueueInput, "members">>;

/** A queue as the API shows it. */
export type QueueView = Queue & { id: string };

function view(queue: Queue): QueueView {
  return { ...queue, id: queue.id as string };
}

/**
 * The timeout pair a request sets, or undefined when it sets neither. Type `none` may come alone
 * and clears the destination; any other type needs its destination in the same request, and a
 * destination never comes without its type.
 */
function timeoutPair(
  input: QueuePatch,
): { type: TimeoutType; destination: string | null } | undefined {
  const type = input.timeout_destination_type;
  const destination = input.timeout_destination;
  if (type === undefined && destination === undefined) return undefined;
  if (type === undefined) throw new BadRequest(TIMEOUT_PAIR);
  if (destination === undefined) {
    if (type !== "none") throw new BadRequest(TIMEOUT_PAIR);
    return { type, destination: null };
  }
  return { type, destination };
}

function member(input: MemberInput): QueueMember {
  return withDefaults(QueueMember, input);
}

/** Queues of the org ordered by number, with their members. */
export async function listQueues(deps: DomainDeps, orgId: string): Promise<QueueView[]> {
  return (await createQueueRepository(deps.db).listByOrg(orgId)).map(view);
}

/** The org's state, the queue's index in it and the queue (tenant-checked). */
async function loadOwnQueue(
  db: Db,
  orgId: string,
  id: string,
): Promise<{ state: OrgState; index: number; queue: Queue }> {
  ownRow(await createQueueRepository(db).findRowById(id), orgId, QUEUE_NOT_FOUND);
  const state = await loadOrgState(db, orgId);
  const index = state.queues.findIndex((q) => q.id === id);
  const queue = state.queues[index];
  if (!queue) throw new NotFound(QUEUE_NOT_FOUND);
  return { state, index, queue };
}

/** One queue of the org with its members; 404 when absent, 403 when another org's. */
export async function getQueue(deps: DomainDeps, orgId: string, id: string): Promise<QueueView> {
  ownRow(await createQueueRepository(deps.db).findRowById(id), orgId, QUEUE_NOT_FOUND);
  const queue = (await createQueueRepository(deps.db).listByOrg(orgId)).find((q) => q.id === id);
  if (!queue) throw new NotFound(QUEUE_NOT_FOUND);
  return view(queue);
}

/** Creates a queue (and members, if given); 409 when its number is taken. */
export async function createQueue(
  deps: DomainDeps,
  orgId: string,
  input: QueueInput,
): Promise<QueueView> {
  const pair = timeoutPair(input) ?? { type: "none" as const, destination: null };
  const created = await changeOrgConfig(deps, orgId, async (trx) => {
    const state = await loadOrgState(trx, orgId);
    const queue = withDefaults(Queue, {
      id: randomUUID(),
      number: input.number,
      name: input.name,
      strategy: input.strategy,
      moh: input.moh,
      max_wait: input.max_wait,
      timeout_destination_type: pair.type,
      timeout_destination: pair.destination,
      members: input.members?.map(member),
    });
    const holder = holderInState(state, queue.number);
    if (holder) throw new Conflict(collisionMessage(queue.number, holder));
    state.queues.push(queue);
    assertValidAt(state, `queues[${state.queues.length - 1}]`);
    await claimExtension(trx, orgId, queue.number, { type: "queue", id: queue.id as string });
    await createQueueRepository(trx, deps.clock).insert(orgId, queue);
    return queue;
  });
  return view(created);
}

/**
 * Applies a partial update of the queue's fields; a changed number is re-claimed. Refused with
 * 400 when it would break another resource (a DID or queue timeout naming the old number).
 */
export async function updateQueue(
  deps: DomainDeps,
  orgId: string,
  id: string,
  patch: QueuePatch,
): Promise<QueueView> {
  const pair = timeoutPair(patch);
  const updated = await changeOrgConfig(deps, orgId, async (trx) => {
    const { state: before, index, queue: current } = await loadOwnQueue(trx, orgId, id);
    const next: Queue = { ...current, members: current.members.map((m) => ({ ...m })) };
    for (const key of ["number", "name", "strategy", "moh", "max_wait"] as const) {
      if (patch[key] !== undefined) (next as Record<string, unknown>)[key] = patch[key];
    }
    if (pair) {
      next.timeout_destination_type = pair.type;
      next.timeout_destination = pair.destination;
    }
    const numberChanged = next.number !== current.number;
    if (numberChanged) {
      const holder = holderInState(before, next.number, { type: "queue", id });
      if (holder) throw new Conflict(collisionMessage(next.number, holder));
    }
    const after = structuredClone(before);
    after.queues[index] = next;
    assertValidAt(after, `queues[${index}]`);
    assertBreaksNothingElse(
      before,
      after,
      `queues[${index}]`,
      `Cannot change queue '${current.name}'`,
    );
    if (numberChanged) {
      await releaseExtension(trx, orgId, current.number, { type: "queue", id });
      await claimExtension(trx, orgId, next.number, { type: "queue", id });
    }
    await createQueueRepository(trx, deps.clock).update(orgId, id, next);
    return next;
  });
  return view(updated);
}

/** Deletes a queue and its members; refused with 400 while a DID, IVR or queue leads to it. */
export async function deleteQueue(deps: DomainDeps, orgId: string, id: string): Promise<void> {
  await changeOrgConfig(deps, orgId, async (trx) => {
    const { state: before, queue } = await loadOwnQueue(trx, orgId, id);
    const after = structuredClone(before);
    after.queues = after.queues.filter((q) => q.id !== id);
    assertBreaksNothingElse(before, after, null, `Cannot delete queue '${queue.name}'`);
    await createQueueRepository(trx, deps.clock).delete(orgId, id);
    await releaseExtension(trx, orgId, queue.number, { type: "queue", id });
  });
}

/** Adds a user to the queue: 409 when already a member, 400 when no such user. */
export async function addQueueMember(
  deps: DomainDeps,
  orgId: string,
  id: string,
  input: MemberInput,
): Promise<QueueView> {
  const updated = await changeOrgConfig(deps, orgId, async (trx) => {
    const { state, index, queue } = await loadOwnQueue(trx, orgId, id);
    if (queue.members.some((m) => m.extension === input.extension)) {
      throw new Conflict(
        `Extension ${input.extension} is already a member of queue '${queue.name}'`,
      );
    }
    const added = member(input);
    queue.members.push(added);
    assertValidAt(state, `queues[${index}]`);
    await createQueueRepository(trx, deps.clock).addMember(id, added);
    return queue;
  });
  return view(updated);
}

/** Changes a member's penalty and/or ring time; 404 when the user is not a member. */
export async function updateQueueMember(
  deps: DomainDeps,
  orgId: string,
  id: string,
  extension: string,
  patch: { penalty?: number; ring_time?: number },
): Promise<QueueView> {
  const updated = await changeOrgConfig(deps, orgId, async (trx) => {
    const { state, index, queue } = await loadOwnQueue(trx, orgId, id);
    const current = queue.members.find((m) => m.extension === extension);
    if (!current) throw new NotFound(MEMBER_NOT_FOUND);
    if (patch.penalty !== undefined) current.penalty = patch.penalty;
    if (patch.ring_time !== undefined) current.ring_time = patch.ring_time;
    assertValidAt(state, `queues[${index}]`);
    await createQueueRepository(trx, deps.clock).updateMember(id, current);
    return queue;
  });
  return view(updated);
}

/** Removes a user from the queue; 404 when not a member. */
export async function removeQueueMember(
  deps: DomainDeps,
  orgId: string,
  id: string,
  extension: string,
): Promise<void> {
  await changeOrgConfig(deps, orgId, async (trx) => {
    await loadOwnQueue(trx, orgId, id);
    const removed = await createQueueRepository(trx, deps.clock).removeMember(id, extension);
    if (!removed) throw new NotFound(MEMBER_NOT_FOUND);
  });
}
