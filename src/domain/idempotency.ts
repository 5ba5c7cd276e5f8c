// `Idempotency-Key` for operations that place calls (SPEC.md §4.5 originate endpoints): the same
// key from the same org gets the first answer back and places no second call. The key is claimed
// in the store before the engine is asked, so concurrent repeats cannot both originate; a request
// that fails before anything was placed gives its key back, so the client may retry it. A key is
// kept 24 hours (as the IETF draft and the big payment APIs do): after that it may be used again,
// and a claim left "in progress" by a crash stops answering 409.
import { createHash } from "node:crypto";
import type { Clock } from "../clock.js";
import type { Db } from "../store/database.js";
import {
  claimIdempotencyKey,
  deleteExpiredIdempotencyKeys,
  findIdempotentRequest,
  releaseIdempotencyKey,
  storeIdempotentAnswer,
} from "../store/idempotency-key-repository.js";
import { BadRequest, Conflict } from "./errors.js";

/** Printable ASCII without spaces, as in the IETF draft's examples; up to 255 characters. */
const KEY = /^[\x21-\x7e]{1,255}$/;

/** How long a key and its stored answer are kept. */
export const IDEMPOTENCY_KEY_TTL_MS = 24 * 60 * 60 * 1000;

export const IDEMPOTENCY_KEY_MESSAGE = "Idempotency-Key must be 1-255 printable characters";
export const KEY_IN_PROGRESS = "A request with this Idempotency-Key is still in progress";
export const KEY_REUSED = "Idempotency-Key was already used for a different request";

export interface IdempotentAnswer<T> {
  /** The answer of the first request with the key (or of this one, without a key). */
  body: T;
  /** True when the answer is a stored one and nothing was done now. */
  replayed: boolean;
}

/**
 * Runs `place` once per (org, key): a repeat with the same operation and body gets the stored
 * answer; a different request under the key 409s, as does a repeat while the first still runs.
 */
export async function runIdempotent<T>(
  deps: { db: Db; clock: Clock },
  scope: { orgId: string; key: string | undefined; operation: string; request: unknown },
  place: () => Promise<T>,
): Promise<IdempotentAnswer<T>> {
  if (scope.key === undefined) return { body: await place(), replayed: false };
  if (!KEY.test(scope.key)) throw new BadRequest(IDEMPOTENCY_KEY_MESSAGE);
  const requestHash = createHash("sha256")
    .update(`${scope.operation}\n${JSON.stringify(scope.request)}`)
    .digest("hex");
  const now = deps.clock();
  const claimed = await claimIdempotencyKey(deps.db, {
    orgId: scope.orgId,
    key: scope.key,
    operation: scope.operation,
    requestHash,
    now: now.toISOString(),
    expiredBefore: expiryCutoff(now),
  });
  if (!claimed) {
    const earlier = await findIdempotentRequest(deps.db, scope.orgId, scope.key);
    if (!earlier || earlier.operation !== scope.operation || earlier.requestHash !== requestHash) {
      throw new Conflict(KEY_REUSED);
    }
    if (!earlier.answer) throw new Conflict(KEY_IN_PROGRESS);
    return { body: earlier.answer.body as T, replayed: true };
  }
  let body: T;
  try {
    body = await place();
  } catch (error) {
    await releaseIdempotencyKey(deps.db, scope.orgId, scope.key);
    throw error;
  }
  await storeIdempotentAnswer(deps.db, scope.orgId, scope.key, { status: 200, body });
  return { body, replayed: false };
}

/** Deletes every org's expired keys (the server's daily housekeeping); answers how many. */
export function expireIdempotencyKeys(db: Db, now: Date): Promise<number> {
  return deleteExpiredIdempotencyKeys(db, expiryCutoff(now));
}

function expiryCutoff(now: Date): string {
  return new Date(now.getTime() - IDEMPOTENCY_KEY_TTL_MS).toISOString();
}
