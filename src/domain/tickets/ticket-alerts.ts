// Ticket alerts of an org (`/orgs/{orgId}/ticket-alerts`): who is told of a new or escalated
// ticket, for which sources and priorities, through which channel — `whatsapp` (a provider
// template message to a phone number) or `webhook` (a JSON POST to a URL, checked like a
// webhook's target). The messages are queued with the ticket (domain/tickets/tickets.ts).
import { randomUUID } from "node:crypto";
import type { Clock } from "../../clock.js";
import { ALERT_CHANNELS, type TicketAlertView } from "../../model/tickets.js";
import type { Db } from "../../store/database.js";
import { createTicketAlertRepository } from "../../store/ticket-alert-repository.js";
import type { UrlPolicy } from "../../webhooks/url-guard.js";
import { BadRequest, Forbidden } from "../errors.js";
import { ownRow } from "../tenant-rows.js";
import { checkWebhookUrl } from "../webhooks/webhook-rules.js";

interface Deps {
  db: Db;
  clock: Clock;
  urlPolicy: UrlPolicy;
}

export { ALERT_CHANNELS };

/** What a caller sets on an alert: the view without its ids and stamps. */
export type TicketAlertFields = Omit<
  TicketAlertView,
  "id" | "org_id" | "created_at" | "updated_at"
>;

const NOT_FOUND = "Ticket alert not found";

/** The path's org must be the caller's (SPEC.md §5 rule 8). */
function assertOwnOrg(callerOrgId: string, pathOrgId: string): void {
  if (callerOrgId !== pathOrgId.toLowerCase()) throw new Forbidden("Access denied");
}

async function checkedRecipient(
  deps: Deps,
  channel: TicketAlertFields["channel"],
  recipient: string,
): Promise<string> {
  if (channel === "webhook") return checkWebhookUrl(recipient, deps.urlPolicy);
  const digits = recipient.replace(/[\s()+-]/g, "");
  if (!/^\d{7,15}$/.test(digits)) {
    throw new BadRequest(
      `Phone number ${recipient} does not look like a valid number (need 7-15 digits)`,
    );
  }
  return `+${digits}`;
}

function unique<T>(values: readonly T[]): T[] {
  return [...new Set(values)];
}

export async function listTicketAlerts(
  deps: Deps,
  callerOrgId: string,
  orgId: string,
): Promise<TicketAlertView[]> {
  assertOwnOrg(callerOrgId, orgId);
  return await createTicketAlertRepository(deps.db).listOf(callerOrgId);
}

export async function getTicketAlert(
  deps: Deps,
  callerOrgId: string,
  orgId: string,
  id: string,
): Promise<TicketAlertView> {
  assertOwnOrg(callerOrgId, orgId);
  const alert = await createTicketAlertRepository(deps.db).findById(id);
  return ownRow(alert, callerOrgId, NOT_FOUND);
}

export async function createTicketAlert(
  deps: Deps,
  callerOrgId: string,
  orgId: string,
  fields: Omit<TicketAlertFields, "active"> & { active?: boolean },
): Promise<TicketAlertView> {
  assertOwnOrg(callerOrgId, orgId);
  const at = deps.clock().toISOString();
  const alert: TicketAlertView = {
    id: randomUUID(),
    org_id: callerOrgId,
    name: fields.name,
    channel: fields.channel,
    recipient: await checkedRecipient(deps, fields.channel, fields.recipient),
    sources: unique(fields.sources),
    priorities: unique(fields.priorities),
    active: fields.active !== false,
    created_at: at,
    updated_at: at,
  };
  await createTicketAlertRepository(deps.db).insert(alert);
  return alert;
}

export async function updateTicketAlert(
  deps: Deps,
  callerOrgId: string,
  orgId: string,
  id: string,
  change: Partial<TicketAlertFields>,
): Promise<TicketAlertView> {
  const current = await getTicketAlert(deps, callerOrgId, orgId, id);
  const next = { ...current, ...change };
  await createTicketAlertRepository(deps.db).update(id, {
    name: next.name,
    channel: next.channel,
    recipient:
      change.recipient !== undefined || change.channel !== undefined
        ? await checkedRecipient(deps, next.channel, next.recipient)
        : current.recipient,
    sources: unique(next.sources),
    priorities: unique(next.priorities),
    active: next.active,
    updated_at: deps.clock().toISOString(),
  });
  return getTicketAlert(deps, callerOrgId, orgId, id);
}

export async function deleteTicketAlert(
  deps: Deps,
  callerOrgId: string,
  orgId: string,
  id: string,
): Promise<void> {
  await getTicketAlert(deps, callerOrgId, orgId, id);
  await createTicketAlertRepository(deps.db).delete(id);
}
