// Seeds for the DID, trunk and media tests: org credentials as headers, pool numbers added by the
// admin, and users, queues and IVRs created through their use cases (extension claims and
// validation included, so a seeded org is one production can reach); here they are only routing
// targets.
import * as assert from "uvu/assert";
import type { DomainDeps } from "../../src/domain/deps.js";
import { noDeploys } from "../../src/domain/ports.js";
import { createIvr } from "../../src/domain/routing/ivrs.js";
import { createQueue } from "../../src/domain/routing/queues.js";
import { createUser } from "../../src/domain/users/users.js";
import type { Ivr, Queue, User } from "../../src/model/org-state.js";
import { createIvrRepository } from "../../src/store/ivr-repository.js";
import { createQueueRepository } from "../../src/store/queue-repository.js";
import { createUserRepository } from "../../src/store/user-repository.js";
import { bearer, type TestApp } from "./helpers.js";

export type TestOrg = { id: string; api_key: string; api_secret: string };

export function orgKey(org: TestOrg): Record<string, string> {
  return { "x-api-key": org.api_key };
}

export async function adminHeaders(app: TestApp): Promise<Record<string, string>> {
  return bearer(await app.adminToken());
}

/** Adds `number` to the pool as the admin; returns the DID. */
export async function addToPool(app: TestApp, number: string) {
  const res = await app.request("POST", "/api/v1/did-pool/admin", {
    headers: await adminHeaders(app),
    body: { number },
  });
  assert.is(res.status, 201, res.text);
  return res.body as { id: string; number: string; pool_status: string };
}

/** Runs the pool flow for `org`: request `didId`, admin approves; returns the request. */
export async function assignFromPool(app: TestApp, org: TestOrg, didId: string) {
  const requested = await app.request("POST", `/api/v1/did-pool/${didId}/request`, {
    headers: orgKey(org),
  });
  assert.is(requested.status, 201, requested.text);
  const approved = await app.request(
    "POST",
    `/api/v1/did-pool/admin/requests/${requested.body.id}/approve`,
    { headers: await adminHeaders(app) },
  );
  assert.is(approved.status, 200, approved.text);
  return approved.body as { id: string; status: string };
}

/**
 * Deps for seeding through the real use cases (claims, validation and all), without recording
 * a deploy: the tests count the deploys of the requests they make.
 */
function seedDeps(app: TestApp): DomainDeps {
  return { ...app.pbx.deps, deployScheduler: noDeploys };
}

/** A user created by the users use case; the stored model user. */
export async function seedUser(
  app: TestApp,
  orgId: string,
  extension: string,
  name = "Ann",
): Promise<User & { id: string }> {
  const { id } = await createUser(seedDeps(app), orgId, { extension, name });
  const user = await createUserRepository(app.db).findById(orgId, id);
  assert.ok(user, "the seeded user is stored");
  return { ...user, id };
}

/** A queue created by the queues use case; the stored model queue. */
export async function seedQueue(
  app: TestApp,
  orgId: string,
  number: string,
  name = "Sales",
): Promise<Queue & { id: string }> {
  const { id } = await createQueue(seedDeps(app), orgId, { number, name });
  const queue = (await createQueueRepository(app.db).listByOrg(orgId)).find((q) => q.id === id);
  assert.ok(queue, "the seeded queue is stored");
  return { ...queue, id };
}

/** An IVR created by the IVRs use case; the stored model IVR. */
export async function seedIvr(
  app: TestApp,
  orgId: string,
  extension: string,
  name = "Main",
): Promise<Ivr & { id: string }> {
  const { id } = await createIvr(seedDeps(app), orgId, { extension, name });
  const ivr = (await createIvrRepository(app.db).listByOrg(orgId)).find((i) => i.id === id);
  assert.ok(ivr, "the seeded IVR is stored");
  return { ...ivr, id };
}
