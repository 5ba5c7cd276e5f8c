// Failed logins are throttled (issue 28 item 10): per account and source address, then per
// source address over all accounts; 429 with Retry-After while locked; a lock is bounded, ends
// with a success from that pair, never stops the right password from another address, and is
// logged. The clock is the test app's, moved by hand.
import { request } from "node:http";
import { sql } from "kysely";
import { test } from "uvu";
import * as assert from "uvu/assert";
import {
  LOGIN_THROTTLE,
  type LockoutLogger,
  withLoginThrottle,
} from "../../src/domain/access/login-throttle.js";
import { Unauthorized } from "../../src/domain/errors.js";
import { freshStore } from "../store/helpers.js";
import { ADMIN_PASSWORD, startTestApp, type TestApp } from "./helpers.js";

let app: TestApp;
test.before(async () => {
  app = await startTestApp();
});
test.after(async () => app.close());

/** A JSON POST from `from` (a loopback address), so tests can be two different sources. */
function postFrom(
  from: string,
  path: string,
  body: unknown,
): Promise<{ status: number; retryAfter: string | undefined; body: { error?: string } }> {
  const bytes = Buffer.from(JSON.stringify(body));
  return new Promise((resolve, reject) => {
    const req = request(
      `${app.url}${path}`,
      {
        method: "POST",
        localAddress: from,
        headers: { "content-type": "application/json", "content-length": bytes.length },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () =>
          resolve({
            status: res.statusCode ?? 0,
            retryAfter: res.headers["retry-after"],
            body: JSON.parse(Buffer.concat(chunks).toString() || "{}"),
          }),
        );
      },
    );
    req.on("error", reject);
    req.end(bytes);
  });
}

const admin = (password: string) => ({ admin_username: "admin", admin_password: password });

test("wrong admin passwords lock that address out with 429 and Retry-After; others still log in", async () => {
  const { pairFailures } = LOGIN_THROTTLE;
  for (let i = 0; i < pairFailures; i++) {
    const res = await postFrom("127.0.0.1", "/api/v1/admin/auth", admin("guess"));
    assert.is(res.status, 401, `attempt ${i + 1}`);
  }
  const locked = await postFrom("127.0.0.1", "/api/v1/admin/auth", admin(ADMIN_PASSWORD));
  assert.is(locked.status, 429, "even the right password waits while the pair is locked");
  assert.ok(Number(locked.retryAfter) >= 1, `Retry-After: ${locked.retryAfter}`);
  assert.match(String(locked.body.error), "Too many failed login attempts");

  const elsewhere = await postFrom("127.0.0.2", "/api/v1/admin/auth", admin(ADMIN_PASSWORD));
  assert.is(elsewhere.status, 200, "another address's failures do not lock the real admin out");

  app.clock.advance(Number(locked.retryAfter));
  const later = await postFrom("127.0.0.1", "/api/v1/admin/auth", admin(ADMIN_PASSWORD));
  assert.is(later.status, 200, "the lock ends after Retry-After");
  const fresh = await postFrom("127.0.0.1", "/api/v1/admin/auth", admin("guess"));
  assert.is(fresh.status, 401, "a success clears the pair's count");
});

test("wrong org secrets are throttled the same way", async () => {
  const org = await app.createOrg("Throttled");
  const body = { api_key: org.api_key, api_secret: "wrong" };
  for (let i = 0; i < LOGIN_THROTTLE.pairFailures; i++) {
    assert.is((await postFrom("127.0.0.3", "/api/v1/auth/login", body)).status, 401);
  }
  const locked = await postFrom("127.0.0.3", "/api/v1/auth/login", body);
  assert.is(locked.status, 429);
  assert.ok(locked.retryAfter);
  const right = { api_key: org.api_key, api_secret: org.api_secret };
  assert.is((await postFrom("127.0.0.4", "/api/v1/auth/login", right)).status, 200);
});

test("one address guessing many accounts is locked as a source", async () => {
  const { sourceFailures, pairFailures } = LOGIN_THROTTLE;
  let answered = 0;
  for (let i = 0; i < sourceFailures; i++) {
    // A new account every few tries, so no pair reaches its own limit.
    const name = `user${Math.floor(i / (pairFailures - 1))}`;
    const res = await postFrom("127.0.0.5", "/api/v1/admin/auth", {
      admin_username: name,
      admin_password: "x",
    });
    if (res.status === 401) answered++;
  }
  assert.is(answered, sourceFailures);
  const locked = await postFrom("127.0.0.5", "/api/v1/admin/auth", admin(ADMIN_PASSWORD));
  assert.is(locked.status, 429);
});

test("locks grow exponentially and stay bounded; each lockout is logged", async () => {
  const store = await freshStore();
  try {
    let now = Date.parse("2026-01-01T00:00:00Z");
    const logged: Record<string, unknown>[] = [];
    const logger: LockoutLogger = { warn: (fields) => logged.push(fields) };
    const deps = { db: store.db, clock: () => new Date(now), logger };
    const attempt = { account: "admin:root", source: "203.0.113.9" };
    const fail = () =>
      withLoginThrottle(deps, attempt, async () => {
        throw new Unauthorized("Invalid credentials");
      });
    const locks: number[] = [];
    for (let i = 0; i < 40; i++) {
      const error = await fail().catch((e: Error & { retryAfterSeconds?: number }) => e);
      if (error.retryAfterSeconds !== undefined) {
        locks.push(error.retryAfterSeconds);
        now += error.retryAfterSeconds * 1000; // wait it out, then fail again
      }
    }
    assert.ok(locks.length > 3, `locks: ${locks}`);
    assert.ok(locks[1]! > locks[0]!, `grows: ${locks}`);
    const max = LOGIN_THROTTLE.maxLockMs / 1000;
    assert.ok(Math.max(...locks) <= max, `bounded at ${max}s: ${locks}`);
    assert.is(Math.max(...locks), max, "reaches the bound");
    assert.ok(logged.length >= locks.length, "every lockout is logged");
    assert.is(logged[0]!.source, "203.0.113.9");

    // Quiet for a whole window: the count starts again.
    now += LOGIN_THROTTLE.windowMs + max * 1000;
    const again = await fail().catch((e: Error & { retryAfterSeconds?: number }) => e);
    assert.instance(again, Unauthorized);
    const rows = await sql<{ n: number }>`SELECT count(*) AS n FROM login_throttle`.execute(
      store.db,
    );
    assert.ok(Number(rows.rows[0]!.n) >= 1, "kept in the store, shared by replicas");
  } finally {
    await store.close();
  }
});

test.run();
