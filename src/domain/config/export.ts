// `pbxctl export`: an org from the store as the YAML `pbxctl validate` accepts and `pbxctl apply`
// reads back unchanged (export -> apply -> export is byte-identical). Every field is written,
// defaults included, with the store's ids, so nothing depends on derived values. No plaintext
// secret is ever written: users carry `sip.md5_cred`, trunks `password_env: <NAME>` (a name
// derived from the org and the trunk when the store holds the password itself).

import { stringify } from "yaml";
import { type CollectionName, type ItemOf, mapCollections } from "../../model/collections.js";
import type { OrgExtras } from "../../model/org-extras.js";
import type { OrgState, Trunk, User } from "../../model/org-state.js";
import type { Db } from "../../store/database.js";
import { loadOrgState } from "../../store/load-org-state.js";
import { createOrgUserRepository } from "../../store/org-user-repository.js";
import { createOrganizationRepository } from "../../store/organization-repository.js";
import { createWebhookRepository } from "../../store/webhook-repository.js";
import { NotFound } from "../errors.js";
import { memberEntry, webhookEntry } from "./apply-extras.js";

export interface ExportedOrg {
  orgId: string;
  /** `<slug>.yaml`, or `<id>.yaml` for an org without a slug. */
  fileName: string;
  yaml: string;
  /** Environment variables `pbxctl apply` will need (trunk passwords), by name. */
  secretsNeeded: string[];
}

/** The org named by id or slug; throws NotFound. */
export async function findOrgId(db: Db, idOrSlug: string): Promise<string> {
  const row = await createOrganizationRepository(db).findByIdOrSlug(idOrSlug);
  if (!row) throw new NotFound(`Organization ${idOrSlug} not found`);
  return row.id;
}

/** The environment variable a trunk's password is read from when its file does not name one. */
export function trunkPasswordEnv(state: OrgState, trunk: Pick<Trunk, "name">): string {
  const org = (state.org.slug ?? state.org.id.slice(0, 8)).toUpperCase();
  return `PBX_TRUNK_${org}_${trunk.name.toUpperCase()}_PASSWORD`
    .replace(/[^A-Z0-9_]/g, "_")
    .slice(0, 64);
}

function exportedUser(user: User): User {
  const { sip, ...rest } = user;
  if (!sip) return rest;
  // md5_cred is what the engine uses; a password_env beside it would be "given twice".
  if (sip.md5_cred) return { ...rest, sip: { md5_cred: sip.md5_cred } };
  if (sip.password_env) return { ...rest, sip: { password_env: sip.password_env } };
  return rest;
}

function exportedTrunk(state: OrgState, trunk: Trunk): Trunk {
  const { password, password_env, ...rest } = trunk;
  const env = password_env ?? (password !== undefined ? trunkPasswordEnv(state, trunk) : undefined);
  return env === undefined ? rest : { ...rest, password_env: env };
}

/** How each collection is written to a file: secrets replaced by references, the rest as stored. */
const EXPORTED: { [C in CollectionName]: (state: OrgState, item: ItemOf<C>) => ItemOf<C> } = {
  users: (_state, user) => exportedUser(user),
  queues: (_state, queue) => queue,
  ivrs: (_state, ivr) => ivr,
  dids: (_state, did) => did,
  trunks: exportedTrunk,
  outbound_routes: (_state, route) => route,
  time_conditions: (_state, tc) => tc,
};

/** The file data of an org state: the state with secrets replaced by references. */
export function exportState(state: OrgState): { data: OrgState; secretsNeeded: string[] } {
  const org = { ...state.org };
  const collections = mapCollections(<C extends CollectionName>(name: C) => {
    const exported = EXPORTED[name] as (state: OrgState, item: ItemOf<C>) => ItemOf<C>;
    return (state[name] as ItemOf<C>[]).map((item) => exported(state, item)) as OrgState[C];
  });
  const data: OrgState = {
    org: {
      id: org.id,
      name: org.name,
      ...(org.slug !== undefined ? { slug: org.slug } : {}),
      context_prefix: org.context_prefix,
      status: org.status,
      settings: org.settings,
    },
    ...collections,
  };
  const secretsNeeded = collections.trunks.flatMap((t) => (t.password_env ? [t.password_env] : []));
  return { data, secretsNeeded: [...new Set(secretsNeeded)].sort() };
}

/** Renders org file data as YAML (deterministic: same state, same bytes). */
export function renderOrgYaml(data: OrgState): string {
  const header = [
    `# ${data.org.name}: exported from the pbxctl store. Edit, then \`pbxctl apply\` this file.`,
    "# Secrets are references: users carry sip.md5_cred, trunks password_env (set it to apply).",
    "# Not exported: API keys, the org key and secret, webhook signing secrets (set with the API).",
    "",
  ].join("\n");
  return header + stringify(data, { lineWidth: 0, aliasDuplicateObjects: false });
}

/** Loads the org from the store and renders it; throws NotFound. */
export async function exportOrg(db: Db, idOrSlug: string): Promise<ExportedOrg> {
  const orgId = await findOrgId(db, idOrSlug);
  const state = await loadOrgState(db, orgId);
  const { data, secretsNeeded } = exportState(state);
  const [webhooks, members] = await Promise.all([
    createWebhookRepository(db).listByOrg(orgId),
    createOrgUserRepository(db).listByOrg(orgId),
  ]);
  const file: OrgState & OrgExtras = {
    ...data,
    webhooks: webhooks.map(webhookEntry),
    org_users: members.map(memberEntry),
  };
  return {
    orgId,
    fileName: `${state.org.slug ?? state.org.id}.yaml`,
    yaml: renderOrgYaml(file),
    secretsNeeded,
  };
}
