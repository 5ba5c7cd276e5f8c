// Auto-created tickets (SPEC.md §2 "Ticket", §4.7): the org's list, one ticket, a change by a
// person (status, priority, assignee, note) kept in the ticket's history, and the two writes the
// intake makes — a new ticket, or the repeat caller's open ticket raised to `urgent`. A new or
// escalated ticket queues its messages (provider message, workflow trigger, alerts) in the same
// transaction, so a crash never loses one and a rolled-back ticket never sends one.
import { randomUUID } from "node:crypto";
import type { Clock } from "../../clock.js";
import type {
  Ticket,
  TicketHistoryView,
  TicketMessage,
  TicketSource,
  TicketView,
} from "../../model/tickets.js";
import type { Db } from "../../store/database.js";
import { createTicketAlertRepository } from "../../store/ticket-alert-repository.js";
import { createTicketMessageRepository } from "../../store/ticket-message-repository.js";
import {
  createTicketRepository,
  type TicketChange,
  type TicketFilters,
} from "../../store/ticket-repository.js";
import type { OrgPrincipal } from "../access/principal.js";
import { ownRow } from "../tenant-rows.js";

export { TICKET_PRIORITIES, TICKET_SOURCES, TICKET_STATUSES } from "../../model/tickets.js";

const NOT_FOUND = "Ticket not found";

/** The provider template a WhatsApp alert is sent with: ticket id, source, priority, caller. */
export const ALERT_TEMPLATE = "ticket_alert";

function view(row: Ticket): TicketView {
  return {
    id: row.id,
    ticket_id: row.id,
    org_id: row.org_id,
    source: row.source,
    priority: row.priority,
    status: row.status,
    phone: row.phone,
    channel_id: row.channel_id,
    linkedid: row.linkedid,
    assignee: row.assignee,
    note: row.note,
    timestamp: row.created_at,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

interface TicketDeps {
  db: Db;
  clock: Clock;
}

/** One page of the org's tickets, newest first, with the total. */
export async function listTickets(
  deps: TicketDeps,
  orgId: string,
  filters: TicketFilters,
  page: { limit: number; offset: number },
): Promise<{ rows: TicketView[]; total: number }> {
  const found = await createTicketRepository(deps.db).list(orgId, filters, page);
  return { rows: found.rows.map(view), total: found.total };
}

/** The org's ticket with its history; another org's is 403 `Access denied`. */
export async function getTicket(
  deps: TicketDeps,
  orgId: string,
  id: string,
): Promise<TicketView & { history: TicketHistoryView[] }> {
  const tickets = createTicketRepository(deps.db);
  const row = ownRow(await tickets.findById(id), orgId, NOT_FOUND);
  return { ...view(row), history: await tickets.historyOf(id) };
}

/** Who a history entry names for a change made through the API. */
export function actorOf(principal: OrgPrincipal): string {
  if (principal.via === "api_key") return `api_key:${principal.apiKeyId ?? "?"}`;
  if (principal.via === "user_jwt") return `user:${principal.userId ?? "?"}`;
  return principal.via;
}

/** Changes the fields given; the history records each field that changed, from and to. */
export async function updateTicket(
  deps: TicketDeps,
  orgId: string,
  id: string,
  change: TicketChange,
  actor: string,
): Promise<TicketView & { history: TicketHistoryView[] }> {
  await deps.db.transaction().execute(async (trx) => {
    const tickets = createTicketRepository(trx);
    const row = ownRow(await tickets.findById(id), orgId, NOT_FOUND);
    const changes: Record<string, { from: unknown; to: unknown }> = {};
    const applied: TicketChange = {};
    for (const field of ["status", "priority", "assignee", "note"] as const) {
      const to = change[field];
      if (to === undefined || to === row[field]) continue;
      changes[field] = { from: row[field], to };
      (applied as Record<string, unknown>)[field] = to;
    }
    if (Object.keys(changes).length === 0) return;
    const at = deps.clock().toISOString();
    await tickets.update(id, applied, at);
    await tickets.addHistory(id, {
      at,
      actor,
      action: "updated",
      changes,
    });
  });
  return getTicket(deps, orgId, id);
}

/** A call the intake decided deserves a ticket. */
export interface TicketWorthyCall {
  orgId: string;
  source: TicketSource;
  phone: string;
  channelId: string;
  linkedid: string;
}

export type OpenOutcome =
  | { outcome: "created"; ticket: TicketView }
  | { outcome: "repeat_caller"; ticket: TicketView };

/**
 * SPEC.md §4.7: a new `high` ticket for the call, or, when the caller's number already has a
 * ticket that is not closed, that ticket raised to `urgent` and no new one. One transaction with
 * the messages it queues.
 */
export async function openTicketForCall(
  deps: TicketDeps,
  call: TicketWorthyCall,
): Promise<OpenOutcome> {
  return deps.db.transaction().execute(async (trx) => {
    const tickets = createTicketRepository(trx);
    const at = deps.clock().toISOString();
    const open = await tickets.findOpenByPhone(call.orgId, call.phone);
    if (open) {
      if (open.priority !== "urgent") {
        await tickets.update(open.id, { priority: "urgent" }, at);
      }
      await tickets.addHistory(open.id, {
        at,
        actor: "intake",
        action: "escalated",
        changes: {
          priority: { from: open.priority, to: "urgent" },
          repeat_call: { from: null, to: call.linkedid },
        },
      });
      const ticket = view({ ...open, priority: "urgent", updated_at: at });
      if (open.priority !== "urgent") await queueAlerts(trx, ticket, at);
      return { outcome: "repeat_caller" as const, ticket };
    }
    const row: Ticket = {
      id: randomUUID(),
      org_id: call.orgId,
      source: call.source,
      priority: "high",
      status: "open",
      phone: call.phone,
      channel_id: call.channelId,
      linkedid: call.linkedid,
      assignee: null,
      note: null,
      created_at: at,
      updated_at: at,
    };
    await tickets.insert(row);
    await tickets.addHistory(row.id, {
      at,
      actor: "intake",
      action: "created",
      changes: {
        status: { from: null, to: "open" },
        priority: { from: null, to: "high" },
      },
    });
    const ticket = view(row);
    await queueTicketOpened(trx, ticket, at);
    await queueAlerts(trx, ticket, at);
    return { outcome: "created" as const, ticket };
  });
}

/** Digits only: the `to` of a provider message (the Cloud API takes the number without `+`). */
export function messagingNumber(phone: string): string {
  return phone.replace(/\D/g, "");
}

/** The exact body of a WhatsApp Business Cloud API template message. */
export function providerMessageBody(
  to: string,
  template: { name: string; language: string },
  parameters: readonly string[],
): string {
  return JSON.stringify({
    messaging_product: "whatsapp",
    recipient_type: "individual",
    to: messagingNumber(to),
    type: "template",
    template: {
      name: template.name,
      language: { code: template.language },
      components: [
        { type: "body", parameters: parameters.map((text) => ({ type: "text", text })) },
      ],
    },
  });
}

/** The exact body of the open-status workflow trigger (SPEC.md §4.7). */
export function workflowBody(ticket: TicketView): string {
  return JSON.stringify({
    phone: ticket.phone,
    source: ticket.source,
    ticket_id: ticket.id,
    timestamp: ticket.timestamp,
    org_id: ticket.org_id,
  });
}

/** Queues one message about `ticket` in the outbox, in the caller's transaction. */
function queueMessage(
  messages: ReturnType<typeof createTicketMessageRepository>,
  ticket: TicketView,
  at: string,
  message: Pick<TicketMessage, "kind" | "target_url" | "body">,
): Promise<void> {
  return messages.enqueue({
    id: randomUUID(),
    org_id: ticket.org_id,
    ticket_id: ticket.id,
    ...message,
    at,
  });
}

// The ticket-opened message to the caller, and the workflow when the org's config names one.
async function queueTicketOpened(trx: Db, ticket: TicketView, at: string): Promise<void> {
  const messages = createTicketMessageRepository(trx);
  const config = await messages.config(ticket.org_id);
  if (config?.enabled !== 1) return;
  await queueMessage(messages, ticket, at, {
    kind: "provider",
    target_url: null,
    body: providerMessageBody(
      ticket.phone,
      { name: config.template_name, language: config.language },
      [ticket.id],
    ),
  });
  if (config.workflow_url) {
    await queueMessage(messages, ticket, at, {
      kind: "workflow",
      target_url: config.workflow_url,
      body: workflowBody(ticket),
    });
  }
}

// The org's active alerts whose sources and priorities take this ticket.
async function queueAlerts(trx: Db, ticket: TicketView, at: string): Promise<void> {
  const alerts = await createTicketAlertRepository(trx).listOf(ticket.org_id);
  const messages = createTicketMessageRepository(trx);
  const config = await messages.config(ticket.org_id);
  for (const alert of alerts) {
    if (!alert.active) continue;
    if (!alert.sources.includes(ticket.source) || !alert.priorities.includes(ticket.priority)) {
      continue;
    }
    if (alert.channel === "webhook") {
      await queueMessage(messages, ticket, at, {
        kind: "workflow",
        target_url: alert.recipient,
        body: JSON.stringify({ alert_id: alert.id, event: "ticket.alert", ticket }),
      });
    } else {
      await queueMessage(messages, ticket, at, {
        kind: "provider",
        target_url: null,
        body: providerMessageBody(
          alert.recipient,
          { name: ALERT_TEMPLATE, language: config?.language ?? "en_US" },
          [ticket.id, ticket.source, ticket.priority, ticket.phone],
        ),
      });
    }
  }
}
