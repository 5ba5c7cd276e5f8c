// Settings of the ticket messages (SPEC.md §4.7): the messaging provider (WhatsApp Business
// Cloud API shape: base URL, phone number id, access token) and each org's ticket messaging
// config (send the ticket-opened message or not, its template, the open-status workflow). The
// access token is sealed with the server key and never answered back, only whether one is set.
// The WhatsApp admin's templates and test send live here too.
import { randomUUID } from "node:crypto";
import type { Clock } from "../../clock.js";
import {
  type MessagingConfigView,
  type ProviderSettingsView,
  TEMPLATE_CATEGORIES,
  type WhatsappTemplate,
} from "../../model/tickets.js";
import type { Db } from "../../store/database.js";
import { createOrganizationRepository } from "../../store/organization-repository.js";
import { createWhatsappTemplateRepository } from "../../store/ticket-alert-repository.js";
import { createTicketMessageRepository } from "../../store/ticket-message-repository.js";
import { BadRequest, Conflict, NotFound } from "../errors.js";
import { decrypt, encrypt } from "../secrets.js";
import { providerMessageBody } from "./tickets.js";

/** The provider's messages URL for a base URL and a phone number id. */
export function providerMessagesUrl(baseUrl: string, phoneNumberId: string): string {
  return `${baseUrl.replace(/\/+$/, "")}/${encodeURIComponent(phoneNumberId)}/messages`;
}

/** Where the provider's API lives unless configured otherwise. */
export const DEFAULT_PROVIDER_BASE_URL = "https://graph.facebook.com/v21.0";

interface Deps {
  db: Db;
  clock: Clock;
  serverKey: Buffer;
}

export interface ProviderSettingsChange {
  base_url?: string;
  phone_number_id?: string;
  access_token?: string;
}

function httpUrl(raw: string, field: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new BadRequest(`${field} must be an absolute http or https URL`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new BadRequest(`${field} must be an absolute http or https URL`);
  }
  return raw;
}

/** The provider settings without the token. */
export async function providerSettings(deps: Pick<Deps, "db">): Promise<ProviderSettingsView> {
  const row = await createTicketMessageRepository(deps.db).provider();
  return {
    base_url: row?.base_url ?? DEFAULT_PROVIDER_BASE_URL,
    phone_number_id: row?.phone_number_id || null,
    access_token_set: Boolean(row?.access_token),
    updated_at: row?.updated_at ?? null,
  };
}

/** Changes the fields given (the token is sealed); answers the settings without the token. */
export async function saveProviderSettings(
  deps: Deps,
  change: ProviderSettingsChange,
): Promise<ProviderSettingsView> {
  const messages = createTicketMessageRepository(deps.db);
  const row = await messages.provider();
  await messages.saveProvider({
    base_url: change.base_url
      ? httpUrl(change.base_url, "base_url")
      : (row?.base_url ?? DEFAULT_PROVIDER_BASE_URL),
    phone_number_id: change.phone_number_id ?? row?.phone_number_id ?? "",
    access_token:
      change.access_token !== undefined
        ? encrypt(change.access_token, deps.serverKey)
        : (row?.access_token ?? null),
    updated_at: deps.clock().toISOString(),
  });
  return providerSettings(deps);
}

export const DEFAULT_TEMPLATE = { name: "ticket_opened", language: "en_US" } as const;

/** The org's ticket messaging config (disabled with the default template when never set). */
export async function messagingConfig(
  deps: Pick<Deps, "db">,
  orgId: string,
): Promise<MessagingConfigView> {
  const row = await createTicketMessageRepository(deps.db).config(orgId);
  return {
    org_id: orgId,
    enabled: row?.enabled === 1,
    template_name: row?.template_name ?? DEFAULT_TEMPLATE.name,
    language: row?.language ?? DEFAULT_TEMPLATE.language,
    workflow_url: row?.workflow_url ?? null,
    updated_at: row?.updated_at ?? null,
  };
}

/** Changes the org's config (only the fields given). */
export async function saveMessagingConfig(
  deps: Deps,
  orgId: string,
  change: Partial<
    Pick<MessagingConfigView, "enabled" | "template_name" | "language" | "workflow_url">
  >,
): Promise<MessagingConfigView> {
  const organization = await createOrganizationRepository(deps.db).findHandle(orgId);
  if (!organization) throw new NotFound("Organization not found");
  const current = await messagingConfig(deps, orgId);
  const workflow =
    change.workflow_url === undefined
      ? current.workflow_url
      : change.workflow_url === null
        ? null
        : httpUrl(change.workflow_url, "workflow_url");
  await createTicketMessageRepository(deps.db).saveConfig({
    org_id: orgId,
    enabled: (change.enabled ?? current.enabled) ? 1 : 0,
    template_name: change.template_name ?? current.template_name,
    language: change.language ?? current.language,
    workflow_url: workflow,
    updated_at: deps.clock().toISOString(),
  });
  return messagingConfig(deps, orgId);
}

// --- WhatsApp admin: message templates ------------------------------------------------------

export { TEMPLATE_CATEGORIES };

/** What a caller sets on a template: all but its id and stamps. */
export type TemplateFields = Omit<WhatsappTemplate, "id" | "created_at" | "updated_at">;

const TEMPLATE_NOT_FOUND = "Template not found";

export function listTemplates(deps: Pick<Deps, "db">): Promise<WhatsappTemplate[]> {
  return createWhatsappTemplateRepository(deps.db).list();
}

export async function getTemplate(deps: Pick<Deps, "db">, id: string): Promise<WhatsappTemplate> {
  const row = await createWhatsappTemplateRepository(deps.db).findById(id);
  if (!row) throw new NotFound(TEMPLATE_NOT_FOUND);
  return row;
}

async function assertFreeName(
  deps: Pick<Deps, "db">,
  name: string,
  language: string,
  self?: string,
) {
  const holder = await createWhatsappTemplateRepository(deps.db).findByName(name, language);
  if (holder && holder.id !== self) {
    throw new Conflict(`Template '${name}' (${language}) already exists`);
  }
}

export async function createTemplate(
  deps: Pick<Deps, "db" | "clock">,
  fields: TemplateFields,
): Promise<WhatsappTemplate> {
  await assertFreeName(deps, fields.name, fields.language);
  const at = deps.clock().toISOString();
  const row: WhatsappTemplate = { id: randomUUID(), ...fields, created_at: at, updated_at: at };
  await createWhatsappTemplateRepository(deps.db).insert(row);
  return row;
}

export async function updateTemplate(
  deps: Pick<Deps, "db" | "clock">,
  id: string,
  change: Partial<TemplateFields>,
): Promise<WhatsappTemplate> {
  const row = await getTemplate(deps, id);
  const next = { ...row, ...change, updated_at: deps.clock().toISOString() };
  await assertFreeName(deps, next.name, next.language, id);
  await createWhatsappTemplateRepository(deps.db).update(id, next);
  return next;
}

export async function deleteTemplate(deps: Pick<Deps, "db">, id: string): Promise<void> {
  await getTemplate(deps, id);
  await createWhatsappTemplateRepository(deps.db).delete(id);
}

/** One POST of a template message through the provider now; reports the answer. */
export type ProviderSend = (
  url: string,
  body: string,
  headers: Record<string, string>,
) => Promise<number>;

export async function testSend(
  deps: Deps & { send: ProviderSend },
  request: { to: string; template_name: string; language: string; parameters?: string[] },
): Promise<{ success: boolean; status_code: number | null; error: string | null }> {
  const messages = createTicketMessageRepository(deps.db);
  const provider = await messages.provider();
  if (!provider?.access_token || !provider.phone_number_id) {
    throw new BadRequest("Messaging provider is not configured");
  }
  const body = providerMessageBody(
    request.to,
    { name: request.template_name, language: request.language },
    request.parameters ?? [],
  );
  try {
    const status = await deps.send(
      providerMessagesUrl(provider.base_url, provider.phone_number_id),
      body,
      {
        authorization: `Bearer ${decrypt(provider.access_token, deps.serverKey)}`,
        "content-type": "application/json",
      },
    );
    const ok = status >= 200 && status < 300;
    return { success: ok, status_code: status, error: ok ? null : `answered ${status}` };
  } catch (error) {
    return {
      success: false,
      status_code: null,
      error: error instanceof Error ? error.message : String(error),
    };
  }
}
