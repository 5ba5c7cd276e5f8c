// `pbxctl apply` for the sections of an org file the compiler never sees: webhooks (matched by id,
// else url) and platform users (by id, else email). A section the file leaves out leaves the
// store's as it is; a listed section is reconciled like users or queues (create, update, and with
// --prune delete). Webhook secrets are never in a file: an existing webhook keeps its secret, a
// new one has none until `PUT /webhooks/{id}` sets it.
import { randomUUID } from "node:crypto";
import type { OrgExtras, OrgMember, OrgWebhook } from "../../model/org-extras.js";
import type { OrgUserRecord } from "../../model/stored-records.js";
import {
  type WebhookRecord,
  webhookColumnsOf,
  webhookSettingsOf,
} from "../../model/webhook-records.js";
import type { Db } from "../../store/database.js";
import { createOrgUserRepository } from "../../store/org-user-repository.js";
import { createWebhookRepository, newWebhookRecord } from "../../store/webhook-repository.js";
import { RETRY_COUNT, TIMEOUT_MS } from "../../webhooks/policy.js";
import type { UrlPolicy } from "../../webhooks/url-guard.js";
import { BadRequest } from "../errors.js";
import { checkInteger, checkWebhookUrl, parseWebhookEvents } from "../webhooks/webhook-rules.js";
import type { Change } from "./apply.js";
import { type Matched, match } from "./matching.js";

export interface ExtrasPlan {
  webhooks: Matched<OrgWebhook> | null;
  members: Matched<OrgMember> | null;
  changes: Change[];
  kept: Change[];
}

/** A stored webhook as its file entry (the secret is not part of it). */
export function webhookEntry(row: WebhookRecord): OrgWebhook {
  return { id: row.id, ...webhookSettingsOf(row) };
}

/** A stored platform user as its file entry (the identity provider's subject stays behind). */
export function memberEntry(row: OrgUserRecord): OrgMember {
  return {
    id: row.id,
    email: row.email,
    name: row.name,
    role: row.role as OrgMember["role"],
    status: row.status as OrgMember["status"],
  };
}

/** What the file's webhooks and platform users change; throws BadRequest on an invalid entry. */
export async function planOrgExtras(
  db: Db,
  orgId: string,
  file: OrgExtras,
  options: { prune: boolean; urlPolicy: UrlPolicy },
): Promise<ExtrasPlan> {
  const plan: ExtrasPlan = { webhooks: null, members: null, changes: [], kept: [] };
  const note = <T>(kind: Change["kind"], m: Matched<T>, key: (x: T) => string) => {
    for (const x of m.creates) plan.changes.push({ kind, action: "create", key: key(x) });
    for (const x of m.updates) plan.changes.push({ kind, action: "update", key: key(x) });
    for (const x of m.extra) {
      (options.prune ? plan.changes : plan.kept).push({ kind, action: "delete", key: key(x) });
    }
  };
  if (file.webhooks !== undefined) {
    const desired: OrgWebhook[] = [];
    for (const [i, hook] of file.webhooks.entries()) {
      try {
        // The API's bounds and messages (webhook-rules.ts), defaults filled in as it does.
        const retries = hook.retry_count ?? RETRY_COUNT.default;
        const retry_count = checkInteger("retry_count", retries, RETRY_COUNT);
        const timeout = checkInteger("timeout", hook.timeout ?? TIMEOUT_MS.default, TIMEOUT_MS);
        desired.push({
          ...hook,
          url: await checkWebhookUrl(hook.url, options.urlPolicy),
          events: parseWebhookEvents(hook.events),
          retry_count,
          timeout,
        });
      } catch (error) {
        throw new BadRequest(`webhooks[${i}]: ${(error as Error).message}`);
      }
    }
    const stored = (await createWebhookRepository(db).listByOrg(orgId)).map(webhookEntry);
    plan.webhooks = match(stored, desired, (hook) => hook.url);
    note("webhook", plan.webhooks, (hook) => hook.url);
  }
  if (file.org_users !== undefined) {
    const desired = file.org_users.map((member) => ({
      ...member,
      email: member.email.trim().toLowerCase(),
    }));
    const stored = (await createOrgUserRepository(db).listByOrg(orgId)).map(memberEntry);
    plan.members = match(stored, desired, (member) => member.email);
    const final = [...plan.members.inFileOrder, ...(options.prune ? [] : plan.members.extra)];
    const hadOwner = stored.some((m) => m.role === "owner" && m.status === "active");
    if (hadOwner && !final.some((m) => m.role === "owner" && m.status === "active")) {
      throw new BadRequest("org_users: an organization must keep at least one active owner");
    }
    note("org_user", plan.members, (member) => member.email);
  }
  return plan;
}

/** A planned webhook's columns: `planOrgExtras` filled in its retry count and timeout. */
function columnsOf(hook: OrgWebhook) {
  return webhookColumnsOf({ ...hook, retry_count: hook.retry_count!, timeout: hook.timeout! });
}

/** Writes what `planOrgExtras` decided, in the caller's transaction. */
export async function writeOrgExtras(
  db: Db,
  orgId: string,
  plan: ExtrasPlan,
  prune: boolean,
  now: string,
): Promise<void> {
  if (plan.webhooks) {
    const webhooks = createWebhookRepository(db);
    if (prune) for (const hook of plan.webhooks.extra) await webhooks.delete(orgId, hook.id!);
    for (const hook of plan.webhooks.creates) {
      await webhooks.insert(
        newWebhookRecord(
          { id: hook.id ?? randomUUID(), org_id: orgId, ...columnsOf(hook), secret: null },
          now,
        ),
      );
    }
    for (const hook of plan.webhooks.updates) {
      await webhooks.update(orgId, hook.id!, columnsOf(hook), now);
    }
  }
  if (plan.members) {
    const members = createOrgUserRepository(db);
    if (prune) for (const member of plan.members.extra) await members.delete(orgId, member.id!);
    for (const member of plan.members.creates) {
      await members.insert({
        id: member.id ?? randomUUID(),
        org_id: orgId,
        email: member.email,
        subject: null,
        name: member.name,
        role: member.role,
        status: member.status,
        created_at: now,
        updated_at: now,
      });
    }
    for (const member of plan.members.updates) {
      await members.update(orgId, member.id!, {
        email: member.email,
        name: member.name,
        role: member.role,
        status: member.status,
        updated_at: now,
      });
    }
  }
}
