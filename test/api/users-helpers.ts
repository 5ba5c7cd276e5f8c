// Helpers of the users and queues API tests: orgs with their credentials, rows other resources'
// routes would create (DIDs, IVRs), and the configuration the store holds, compiled.
import { compileOrg } from "../../src/compiler/index.js";
import type { Did, Ivr } from "../../src/model/org-state.js";
import { createDidRepository } from "../../src/store/did-repository.js";
import { createExtensionClaimRepository } from "../../src/store/extension-claim-repository.js";
import { createIvrRepository } from "../../src/store/ivr-repository.js";
import { loadOrgState } from "../../src/store/load-org-state.js";
import type { TestApp } from "./helpers.js";

export interface TestOrg {
  id: string;
  headers: Record<string, string>;
}

/** A fresh active org and the org-key headers to call it with. */
export async function newOrg(app: TestApp, name: string): Promise<TestOrg> {
  const org = await app.createOrg(name);
  return { id: org.id, headers: { "x-api-key": org.api_key } };
}

/** Stores a DID of the org directly (the DID routes are tested elsewhere). */
export async function seedDid(
  app: TestApp,
  orgId: string,
  number: string,
  fields: Partial<Did> = {},
): Promise<void> {
  await createDidRepository(app.db).insert(orgId, {
    number,
    status: "active",
    pool_status: "assigned",
    is_default: false,
    routing_type: null,
    routing_destination: null,
    routing_environment: "prod",
    ...fields,
  });
}

/** Stores an IVR of the org with its extension claim, as the IVR routes would. */
export async function seedIvr(
  app: TestApp,
  orgId: string,
  name: string,
  extension: string,
  options: Ivr["options"] = [],
): Promise<string> {
  const ivr = await createIvrRepository(app.db).insert(orgId, {
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
    options,
  });
  await createExtensionClaimRepository(app.db).claim(orgId, extension, { type: "ivr", id: ivr.id });
  return ivr.id;
}

/** The org's files as the compiler makes them from what the store now holds, by file name. */
export async function compiledFiles(app: TestApp, orgId: string): Promise<Record<string, string>> {
  const state = await loadOrgState(app.db, orgId);
  const files: Record<string, string> = {};
  for (const file of compileOrg(state).files) {
    files[file.path.slice(file.path.lastIndexOf("/") + 1)] = file.content;
  }
  return files;
}

/** Who holds an extension in the org's claim table (undefined when free). */
export async function claimHolder(app: TestApp, orgId: string, extension: string) {
  return createExtensionClaimRepository(app.db).holderOf(orgId, extension);
}

/** Deploys scheduled since `mark` (an index into app.deploys). */
export function deploysSince(app: TestApp, mark: number): string[] {
  return app.deploys.slice(mark);
}
