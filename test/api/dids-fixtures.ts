// Seeds for the DID, trunk and media tests: org credentials as headers, pool numbers added by the
// admin, and users, queues and IVRs written straight to the store (their own routes are tested
// elsewhere; here they are only routing targets).
import * as assert from "uvu/assert";
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

export async function seedUser(app: TestApp, orgId: string, extension: string, name = "Ann") {
  const user: User = {
    extension,
    name,
    routing_type: "human",
    status: "active",
    ring_target: "ext",
    phone_number: null,
    ring_time: 30,
    outbound_did: null,
    call_recording: true,
    sip: { md5_cred: "0123456789abcdef0123456789abcdef" },
  };
  return createUserRepository(app.db).insert(orgId, user);
}

export async function seedQueue(app: TestApp, orgId: string, number: string, name = "Sales") {
  const queue: Queue = {
    number,
    name,
    strategy: "ringall",
    moh: "default",
    max_wait: 300,
    timeout_destination_type: "none",
    timeout_destination: null,
    members: [],
  };
  return createQueueRepository(app.db).insert(orgId, queue);
}

export async function seedIvr(app: TestApp, orgId: string, extension: string, name = "Main") {
  const ivr: Ivr = {
    name,
    extension,
    description: "",
    timeout: 10,
    max_retries: 3,
    status: "active",
    greeting_language: "en-IN",
    greeting_voice: "en-IN-Wavenet-D",
    greeting_prompt: null,
    direct_extension_dial: false,
    options: [],
  };
  return createIvrRepository(app.db).insert(orgId, ivr);
}
