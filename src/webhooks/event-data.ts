// The `data` object of each engine webhook event (SPEC.md §6 leaves it open): one TypeBox schema
// per event, which the OpenAPI document publishes (callbacks of `POST /webhooks`) and the tests
// check real deliveries against.
import { type TSchema, Type } from "@sinclair/typebox";
import { CrmClient, CrmLead, LEAD_STATUSES } from "../model/crm.js";
import { TimeCondition } from "../model/org-state.js";
import type { WebhookEvent } from "./events.js";

const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);

const callFields = {
  call_id: Type.String({
    description: "the call's linkedid: `GET /calls/{linkedId}/journey`, `/recording`",
  }),
  uniqueid: Type.String({ description: "the engine channel (leg) the event happened on" }),
  channel: Type.String({ description: "that channel's name, empty when simulated" }),
  from: Type.String({ description: "caller ID number of that channel" }),
  to: Type.String({ description: "the extension or number it was dialling" }),
  at: Type.String({ format: "date-time", description: "the engine's time of the event" }),
  simulated: Type.Optional(Type.Literal(true, { description: "sent by POST /test/call-event" })),
};

const CallStep = (title: string, description: string) =>
  Type.Object(callFields, { title, description, additionalProperties: false });

const CallEnd = (title: string, description: string) =>
  Type.Object(
    {
      ...callFields,
      answered: Type.Boolean({ description: "some channel of the org's call was answered" }),
      hangup_cause: Nullable(Type.Integer({ description: "Q.850 cause of the last hangup" })),
      hangup_cause_text: Nullable(Type.String()),
    },
    { title, description, additionalProperties: false },
  );

const queueFields = {
  call_id: callFields.call_id,
  uniqueid: callFields.uniqueid,
  channel: callFields.channel,
  from: callFields.from,
  queue: Type.String({ description: "the engine's queue name, `<context_prefix>q<number>`" }),
  at: callFields.at,
};

const registrationFields = {
  extension: Type.String({ description: "the user's extension" }),
  endpoint: Type.String({
    description: "the engine's endpoint of the phone, `<context_prefix><extension>`",
  }),
  contact: Type.String({ description: "SIP URI of the phone's contact that changed" }),
  at: Type.String({ format: "date-time", description: "when the service saw the change" }),
};

const changes = Type.Array(Type.String(), {
  description:
    "the fields whose value changed: name, phone, email, company, status, owner, tags, notes, custom_fields, client_id / lead_id",
});
const LeadStatus = Type.Union(LEAD_STATUSES.map((s) => Type.Literal(s)));

/** What the CRM operations (`/crm/*`, docs/crm.md) emit, in the transaction of the change. */
const CRM_EVENT_DATA = {
  "crm.lead.created": Type.Object(
    { lead: CrmLead },
    {
      title: "CrmLeadCreatedData",
      description: "A lead was created.",
      additionalProperties: false,
    },
  ),
  "crm.lead.updated": Type.Object(
    { lead: CrmLead, changes },
    {
      title: "CrmLeadUpdatedData",
      description:
        "A lead changed (a write that changes nothing sends nothing); `lead` is after the change.",
      additionalProperties: false,
    },
  ),
  "crm.lead.status_changed": Type.Object(
    { lead: CrmLead, from: LeadStatus, to: LeadStatus },
    {
      title: "CrmLeadStatusChangedData",
      description:
        "A lead's status changed (by an update or by conversion to a client, which sets `won`); sent after its crm.lead.updated.",
      additionalProperties: false,
    },
  ),
  "crm.client.created": Type.Object(
    { client: CrmClient },
    {
      title: "CrmClientCreatedData",
      description: "A client was created, directly or by converting a lead (`client.lead_id`).",
      additionalProperties: false,
    },
  ),
  "crm.client.updated": Type.Object(
    { client: CrmClient, changes },
    {
      title: "CrmClientUpdatedData",
      description: "A client changed; `client` is after the change.",
      additionalProperties: false,
    },
  ),
} satisfies Partial<Record<WebhookEvent, TSchema>>;

const trunkFields = {
  trunk: Type.String({ description: "the trunk's name in the org" }),
  registration: Type.String({
    description: "the engine's registration section, `<context_prefix>trunk_<name>`",
  }),
  status: Type.String({
    description: "Asterisk's status of the registration now (`Registered`, `Rejected`)",
  }),
  previous_status: Nullable(
    Type.String({ description: "the status recorded before (null: first seen)" }),
  ),
  server_uri: Type.String({ description: "the registrar's SIP URI" }),
  client_uri: Type.String({ description: "the account's SIP URI (address of record)" }),
  at: Type.String({ format: "date-time", description: "when the service saw the change" }),
};

/** A time condition as `/time-conditions` answers it. */
const TimeConditionData = Type.Object(
  { ...TimeCondition.properties, id: Type.String({ format: "uuid" }) },
  { additionalProperties: false },
);

/** What `/time-conditions` emits, in the transaction of the change (as the CRM routes do). */
const TIME_CONDITION_EVENT_DATA = {
  "time_condition.created": Type.Object(
    { time_condition: TimeConditionData },
    {
      title: "TimeConditionCreatedData",
      description: "A time condition (business-hours schedule) was created.",
      additionalProperties: false,
    },
  ),
  "time_condition.updated": Type.Object(
    { time_condition: TimeConditionData },
    {
      title: "TimeConditionUpdatedData",
      description: "A time condition changed; `time_condition` is after the change.",
      additionalProperties: false,
    },
  ),
  "time_condition.deleted": Type.Object(
    { time_condition: TimeConditionData },
    {
      title: "TimeConditionDeletedData",
      description: "A time condition was deleted; `time_condition` is what it was.",
      additionalProperties: false,
    },
  ),
} satisfies Partial<Record<WebhookEvent, TSchema>>;

/** The `data` schema of every event the engine listeners emit, and of the CRM and time condition events. */
export const ENGINE_EVENT_DATA = {
  "call.initiated": CallStep(
    "CallInitiatedData",
    "The org's first step of a call: its first channel appeared.",
  ),
  "call.ringing": CallStep("CallRingingData", "A phone or number of the call is being dialled."),
  "call.answered": CallStep(
    "CallAnsweredData",
    "A channel of the call was first answered (a phone, the IVR, voicemail or a queue).",
  ),
  "call.ended": CallEnd(
    "CallEndedData",
    "The last of the org's channels of the call hung up, after an answer or with a normal cause.",
  ),
  "call.failed": CallEnd(
    "CallFailedData",
    "The last of the org's channels hung up unanswered with a failure cause (busy, unavailable, congestion...).",
  ),
  "queue.entered": Type.Object(
    { ...queueFields, position: Nullable(Type.Integer()) },
    { title: "QueueEnteredData", additionalProperties: false },
  ),
  "queue.abandoned": Type.Object(
    {
      ...queueFields,
      position: Nullable(Type.Integer()),
      hold_time: Nullable(Type.Integer({ description: "seconds waited" })),
    },
    { title: "QueueAbandonedData", additionalProperties: false },
  ),
  "queue.answered": Type.Object(
    {
      ...queueFields,
      member: Type.String({ description: "the queue member who answered" }),
      agent_channel: Type.String(),
      hold_time: Nullable(Type.Integer({ description: "seconds waited" })),
      ring_time: Nullable(Type.Integer({ description: "seconds the member's phone rang" })),
    },
    { title: "QueueAnsweredData", additionalProperties: false },
  ),
  "user.registered": Type.Object(registrationFields, {
    title: "UserRegisteredData",
    description:
      "A phone registered on the user's extension that had no registered phone (a second phone on the same extension sends nothing).",
    additionalProperties: false,
  }),
  "user.unregistered": Type.Object(registrationFields, {
    title: "UserUnregisteredData",
    description:
      "The last registered phone of the user's extension unregistered or its registration expired.",
    additionalProperties: false,
  }),
  "trunk.registered": Type.Object(trunkFields, {
    title: "TrunkRegisteredData",
    description:
      "The org trunk's outbound registration was accepted by its registrar (it was not registered before).",
    additionalProperties: false,
  }),
  "trunk.failed": Type.Object(trunkFields, {
    title: "TrunkFailedData",
    description:
      "The org trunk's registrar refused its registration (`Rejected`: 403, bad credentials, or a refusal the engine retries later).",
    additionalProperties: false,
  }),
  ...CRM_EVENT_DATA,
  ...TIME_CONDITION_EVENT_DATA,
} satisfies Partial<Record<WebhookEvent, TSchema>>;

export type EngineEvent = keyof typeof ENGINE_EVENT_DATA;

/** The body of one delivery of `event` (SPEC.md §6 rule 3) with its `data` schema. */
export function deliveryBodySchema(event: EngineEvent) {
  return Type.Object(
    {
      id: Type.String({ description: "`<webhookId>_<event time in µs>_<attempt>`" }),
      event: Type.Literal(event),
      timestamp: Type.String({ format: "date-time", description: "when this attempt was sent" }),
      organization_id: Type.String({ format: "uuid" }),
      data: ENGINE_EVENT_DATA[event],
      attempt: Type.Integer({ minimum: 1 }),
    },
    { additionalProperties: false },
  );
}
