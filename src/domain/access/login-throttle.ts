// Throttling of failed logins (issue 28 item 10): `POST /admin/auth`, `POST /auth/login` (org
// secrets) and `POST /auth/user-login` (platform users). The rule (docs/api.md, "Failed logins"):
// - two counts per attempt: the account at this source address (pair), and the source address
//   over every account (source);
// - 5 failures of a pair, or 20 of a source, within 15 minutes of each other lock that key: 1 s,
//   then twice as long for each further failure, never more than 15 minutes;
// - while either key is locked the login answers 429 with Retry-After, before any secret is
//   checked (so a locked guesser learns nothing, not even from the right password);
// - a success clears its pair (not its source: a guesser who also owns an account cannot reset
//   its address by logging into it); a key quiet for 15 minutes (after its lock ends) starts
//   again from 0.
// An attacker elsewhere therefore cannot lock a real user out: the user's own address is a
// different pair and source. Each new lock is logged (warn). Counts live in the store, so API
// replicas on one database share them.
import { decodeJwt } from "jose";
import { createLoginThrottleRepository } from "../../store/login-throttle-repository.js";
import type { DomainDeps } from "../deps.js";
import { TooManyRequests, Unauthorized } from "../errors.js";
import { digest } from "../secrets.js";

export const LOGIN_THROTTLE = {
  pairFailures: 5,
  sourceFailures: 20,
  /** Failures further apart than this start the count again. */
  windowMs: 15 * 60_000,
  firstLockMs: 1000,
  maxLockMs: 15 * 60_000,
} as const;

export const THROTTLED_MESSAGE = "Too many failed login attempts; try again later";

/** Where lockouts are reported (the server's logger). */
export interface LockoutLogger {
  warn(fields: Record<string, unknown>, message: string): void;
}

export type LoginThrottleDeps = Pick<DomainDeps, "db" | "clock"> & { logger: LockoutLogger };

/** One login attempt: the account it names (kind-prefixed) and the address it came from. */
export interface LoginAttempt {
  /** e.g. `admin:<username>`, `org:<key digest>`; hashed before it is stored. */
  account: string;
  source: string;
}

/** An admin login: the account is the user name given. */
export function adminAttempt(username: string, source: string): LoginAttempt {
  return { account: `admin:${username}`, source };
}

/** An org login: the account is the org key given. */
export function orgKeyAttempt(apiKey: string, source: string): LoginAttempt {
  return { account: `org:${apiKey}`, source };
}

/**
 * A platform-user login: the account is the subject the identity token claims. The claim is
 * unverified (the token may be forged), which is why it only ever names a pair with the source.
 */
export function identityTokenAttempt(idpToken: string, source: string): LoginAttempt {
  let subject = "";
  try {
    subject = String(decodeJwt(idpToken).sub ?? "");
  } catch {
    // Not a JWT: every such token of this source is one account.
  }
  return { account: `user:${subject}`, source };
}

interface Key {
  key: string;
  kind: "pair" | "source";
  threshold: number;
}

function keysOf(attempt: LoginAttempt): [Key, Key] {
  // The account is hashed: rows never hold a key, a user name or a token.
  const account = digest(attempt.account).slice(0, 32);
  return [
    {
      key: `pair:${account}:${attempt.source}`,
      kind: "pair",
      threshold: LOGIN_THROTTLE.pairFailures,
    },
    { key: `source:${attempt.source}`, kind: "source", threshold: LOGIN_THROTTLE.sourceFailures },
  ];
}

/** How long the `failures`-th failure locks a key whose limit is `threshold` (0: not locked). */
export function lockMs(failures: number, threshold: number): number {
  if (failures < threshold) return 0;
  const doublings = Math.min(failures - threshold, 30);
  return Math.min(LOGIN_THROTTLE.firstLockMs * 2 ** doublings, LOGIN_THROTTLE.maxLockMs);
}

/** 429 with the seconds to wait; what the API answers as Retry-After. */
export class LoginThrottled extends TooManyRequests {
  constructor(readonly retryAfterSeconds: number) {
    super(THROTTLED_MESSAGE);
  }
}

async function assertNotLocked(deps: LoginThrottleDeps, keys: readonly Key[]): Promise<void> {
  const now = deps.clock().getTime();
  const rows = await createLoginThrottleRepository(deps.db).find(keys.map((k) => k.key));
  const until = Math.max(0, ...rows.map((r) => (r.locked_until ? Date.parse(r.locked_until) : 0)));
  if (until > now) throw new LoginThrottled(Math.ceil((until - now) / 1000));
}

async function noteFailure(
  deps: LoginThrottleDeps,
  attempt: LoginAttempt,
  keys: readonly Key[],
): Promise<void> {
  const now = deps.clock();
  const repository = createLoginThrottleRepository(deps.db);
  await deps.db.transaction().execute(async (trx) => {
    const rows = createLoginThrottleRepository(trx);
    const stored = new Map((await rows.find(keys.map((k) => k.key))).map((r) => [r.key, r]));
    for (const { key, kind, threshold } of keys) {
      const row = stored.get(key);
      // Quiet since the last failure or, when that failure locked the key, since the lock ended.
      const quietSince = row
        ? Math.max(Date.parse(row.last_failure_at), Date.parse(row.locked_until ?? "") || 0)
        : 0;
      const lapsed = !row || now.getTime() - quietSince > LOGIN_THROTTLE.windowMs;
      const failures = (lapsed ? 0 : row.failures) + 1;
      const lock = lockMs(failures, threshold);
      await rows.save({
        key,
        failures,
        last_failure_at: now.toISOString(),
        locked_until: lock > 0 ? new Date(now.getTime() + lock).toISOString() : null,
      });
      if (lock > 0) {
        deps.logger.warn(
          { lockout: kind, source: attempt.source, failures, locked_seconds: lock / 1000 },
          "login locked out after failed attempts",
        );
      }
    }
  });
  // Keys quiet for longer than a window and the longest lock are forgotten.
  const stale = new Date(now.getTime() - LOGIN_THROTTLE.windowMs - LOGIN_THROTTLE.maxLockMs);
  await repository.sweep(stale.toISOString());
}

/**
 * Runs `login` unless the attempt's pair or source is locked (LoginThrottled, 429). A login that
 * fails with Unauthorized counts a failure; one that succeeds clears its pair. Other errors
 * (a malformed request, a server without the feature) count nothing.
 */
export async function withLoginThrottle<T>(
  deps: LoginThrottleDeps,
  attempt: LoginAttempt,
  login: () => Promise<T>,
): Promise<T> {
  const keys = keysOf(attempt);
  await assertNotLocked(deps, keys);
  let result: T;
  try {
    result = await login();
  } catch (error) {
    if (error instanceof Unauthorized) await noteFailure(deps, attempt, keys);
    throw error;
  }
  await createLoginThrottleRepository(deps.db).clear(keys[0].key);
  return result;
}
