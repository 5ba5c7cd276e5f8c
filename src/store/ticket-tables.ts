// Row types of the ticket tables (migration 2401).
import type { Generated, Selectable } from "kysely";

import type {
  TEMPLATE_CATEGORIES,
  Ticket,
  TicketMessage,
  TicketPriority,
  TicketSource,
  TicketStatus,
} from "../model/tickets.js";

export type { TicketPriority, TicketSource, TicketStatus };

/** Its columns are the model's Ticket. */
export type TicketsTable = Ticket;

export interface TicketHistoryTable {
  id: Generated<number>;
  ticket_id: string;
  at: string;
  actor: string;
  /** `created`, `escalated` (repeat caller) or `updated`. */
  action: string;
  /** JSON object: field -> {from, to}. */
  changes: string;
}

export interface TicketIntakeTable {
  org_id: string;
  linkedid: string;
  payload: string;
  status: "pending" | "done";
  outcome: string | null;
  ticket_id: string | null;
  received_at: string;
  decided_at: string | null;
}

export interface TicketPollerStateTable {
  name: string;
  last_record_id: number;
  updated_at: string;
}

export interface TicketPollerPostsTable {
  org_id: string;
  linkedid: string;
  body: string;
  status: "pending" | "sent";
  attempts: number;
  next_attempt_at: string;
  last_error: string | null;
  created_at: string;
}

/** The ticket outbox: its columns are the model's TicketMessage. */
export type TicketMessagesTable = TicketMessage;

export interface MessagingProviderTable {
  id: string;
  base_url: string;
  phone_number_id: string;
  access_token: string | null;
  updated_at: string;
}

export interface TicketMessagingConfigTable {
  org_id: string;
  enabled: number;
  template_name: string;
  language: string;
  workflow_url: string | null;
  updated_at: string;
}

export interface TicketAlertsTable {
  id: string;
  org_id: string;
  name: string;
  channel: string;
  recipient: string;
  sources: string;
  priorities: string;
  active: number;
  created_at: string;
  updated_at: string;
}

export interface WhatsappTemplatesTable {
  id: string;
  name: string;
  language: string;
  category: (typeof TEMPLATE_CATEGORIES)[number];
  body_text: string;
  created_at: string;
  updated_at: string;
}

export interface TicketTables {
  tickets: TicketsTable;
  ticket_history: TicketHistoryTable;
  ticket_intake: TicketIntakeTable;
  ticket_poller_state: TicketPollerStateTable;
  ticket_poller_posts: TicketPollerPostsTable;
  ticket_messages: TicketMessagesTable;
  messaging_provider: MessagingProviderTable;
  ticket_messaging_config: TicketMessagingConfigTable;
  ticket_alerts: TicketAlertsTable;
  whatsapp_templates: WhatsappTemplatesTable;
}

export type TicketAlertRow = Selectable<TicketAlertsTable>;
export type WhatsappTemplateRow = Selectable<WhatsappTemplatesTable>;
