// Per-org `ak_` API keys: created with a subset of the 14 permissions, listed without secrets,
// revoked with immediate effect (every request looks the key up again).
import { randomUUID } from "node:crypto";
import type { ApiKey, ApiKeyView } from "../../model/access-views.js";
import { createApiKeyRepository } from "../../store/api-key-repository.js";
import type { DomainDeps } from "../deps.js";
import { BadRequest, NotFound } from "../errors.js";
import { digest, hashSecret, newToken } from "../secrets.js";
import { API_KEY_PERMISSIONS } from "./permissions.js";

function apiKeyView(key: ApiKey): ApiKeyView {
  return {
    id: key.id,
    name: key.name,
    key_prefix: key.key_prefix,
    permissions: key.permissions,
    revoked: key.revoked_at !== null,
    revoked_at: key.revoked_at,
    created_at: key.created_at,
  };
}

/** Creates a key; `api_key` (`ak_`) and `api_secret` (`as_`) appear in this answer only. */
export async function createApiKey(
  deps: DomainDeps,
  orgId: string,
  input: { name: string; permissions: string[] },
): Promise<ApiKeyView & { api_key: string; api_secret: string }> {
  const unknown = input.permissions.filter(
    (p) => !(API_KEY_PERMISSIONS as readonly string[]).includes(p),
  );
  if (unknown.length > 0) throw new BadRequest(`Unknown permission: ${unknown.join(", ")}`);
  // Stored in the canonical order so that lists read the same whatever order the client sent.
  const permissions = API_KEY_PERMISSIONS.filter((p) => input.permissions.includes(p));
  const apiKey = newToken("ak_");
  const apiSecret = newToken("as_");
  const row = await createApiKeyRepository(deps.db).insert({
    id: randomUUID(),
    org_id: orgId,
    name: input.name,
    key_digest: digest(apiKey),
    key_prefix: apiKey.slice(0, 11),
    secret_hash: hashSecret(apiSecret),
    permissions,
    revoked_at: null,
    created_at: deps.clock().toISOString(),
  });
  return { ...apiKeyView(row), api_key: apiKey, api_secret: apiSecret };
}

/** The org's keys, oldest first, revoked ones included (marked). */
export async function listApiKeys(deps: DomainDeps, orgId: string): Promise<ApiKeyView[]> {
  return (await createApiKeyRepository(deps.db).listByOrg(orgId)).map(apiKeyView);
}

/** One key of the org; 404 for unknown ids and for other orgs' keys alike. */
export async function getApiKey(deps: DomainDeps, orgId: string, id: string): Promise<ApiKeyView> {
  const row = await createApiKeyRepository(deps.db).findById(orgId, id);
  if (!row) throw new NotFound("API key not found");
  return apiKeyView(row);
}

/** Revokes a key of the org; the next request made with it fails. Idempotent. */
export async function revokeApiKey(
  deps: DomainDeps,
  orgId: string,
  id: string,
): Promise<ApiKeyView> {
  const repo = createApiKeyRepository(deps.db);
  const row = await repo.findById(orgId, id);
  if (!row) throw new NotFound("API key not found");
  await repo.revoke(orgId, id, deps.clock().toISOString());
  return getApiKey(deps, orgId, id);
}
