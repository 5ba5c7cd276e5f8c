// CRM records of an org (`/crm/*`): leads, clients and the org's custom field definitions. One
// definition of each shape, used by the API's schemas and by the `crm.*` webhook event data.
import { type Static, Type } from "@sinclair/typebox";
import { Nullable } from "./view-shapes.js";

/** A lead's life (issue 16): `won` is also what converting it to a client sets. */
export const LEAD_STATUSES = ["new", "contacted", "qualified", "won", "lost"] as const;
export type LeadStatus = (typeof LEAD_STATUSES)[number];

/** The kinds of value a custom field holds. */
export const CUSTOM_FIELD_TYPES = ["string", "number", "boolean", "date", "enum"] as const;
export type CustomFieldType = (typeof CUSTOM_FIELD_TYPES)[number];

/** A custom field's key in `custom_fields`: lowercase, digits and `_`, starting with a letter. */
export const CUSTOM_FIELD_NAME = "^[a-z][a-z0-9_]{0,39}$";
/** An e-mail address on one line: something@domain.tld, no spaces. */
export const EMAIL =
  "^[^\\s@\\u0000-\\u001f\\u007f]+@[^\\s@\\u0000-\\u001f\\u007f]+\\.[^\\s@\\u0000-\\u001f\\u007f]+$";
/** A tag: letters, digits, `_`, `-`, `.` and `:`, at most 40. */
export const CRM_TAG = "^[A-Za-z0-9_.:-]{1,40}$";
/** A `YYYY-MM-DD` date (a real calendar date is checked in the domain). */
export const ISO_DATE = "^[0-9]{4}-[0-9]{2}-[0-9]{2}$";

export const CustomValue = Type.Union([Type.String(), Type.Number(), Type.Boolean()]);

/** The values of a record's custom fields by field name. */
export const CustomValues = Type.Object(
  {},
  {
    additionalProperties: CustomValue,
    description: "values of the org's custom fields (`/crm/fields`) by field name",
  },
);

const recordFields = {
  id: Type.String({ format: "uuid" }),
  name: Type.String(),
  phone: Nullable(Type.String({ description: "E.164 (`+` and 7-15 digits)" })),
  email: Nullable(Type.String()),
  company: Nullable(Type.String()),
  owner: Nullable(
    Type.String({ description: "who works the record (a person's id, e-mail or extension)" }),
  ),
  tags: Type.Array(Type.String()),
  notes: Type.String(),
  custom_fields: CustomValues,
  created_at: Type.String({ format: "date-time" }),
  updated_at: Type.String({ format: "date-time" }),
};

export const CrmLead = Type.Object(
  {
    ...recordFields,
    status: Type.Union(LEAD_STATUSES.map((s) => Type.Literal(s))),
    client_id: Nullable(
      Type.String({ format: "uuid", description: "the client this lead was converted to" }),
    ),
  },
  { title: "CrmLead", additionalProperties: false },
);

export const CrmClient = Type.Object(
  {
    ...recordFields,
    lead_id: Nullable(
      Type.String({ format: "uuid", description: "the lead this client was converted from" }),
    ),
  },
  { title: "CrmClient", additionalProperties: false },
);

export const CrmField = Type.Object(
  {
    id: Type.String({ format: "uuid" }),
    name: Type.String({ description: "the key in `custom_fields`" }),
    label: Type.String(),
    type: Type.Union(CUSTOM_FIELD_TYPES.map((t) => Type.Literal(t))),
    options: Type.Array(Type.String(), { description: "allowed values of an `enum` field" }),
    required: Type.Boolean({ description: "every write of a lead or client must give a value" }),
    created_at: Type.String({ format: "date-time" }),
  },
  { title: "CrmField", additionalProperties: false },
);

export type CrmLeadView = Static<typeof CrmLead>;
export type CrmClientView = Static<typeof CrmClient>;
export type CrmFieldView = Static<typeof CrmField>;
export type CrmKind = "lead" | "client";

/**
 * A lead or a client as the store keeps it: one shape for both kinds (`status` is a lead's,
 * `linked_id` the client it became or the lead it came from).
 */
export interface CrmRecord {
  id: string;
  org_id: string;
  kind: CrmKind;
  name: string;
  phone: string | null;
  email: string | null;
  company: string | null;
  status: string | null;
  owner: string | null;
  tags: string[];
  notes: string;
  /** Custom values by field name. */
  custom: Record<string, CustomValueType>;
  linked_id: string | null;
  created_at: string;
  updated_at: string;
}

/** A custom field as the store keeps it: the view and the org it belongs to. */
export type CrmFieldRecord = CrmFieldView & { org_id: string };
export type CustomValueType = Static<typeof CustomValue>;
