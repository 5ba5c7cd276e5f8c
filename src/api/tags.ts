// The resource groups of the API document (SPEC.md §1): the nineteen named there, in its order,
// then the three further groups of §4.8 (platform users, compliance, settings), then time
// conditions (issue 27 item 6). Route files
// name their tag from this list; a typo is a type error.

export const TAGS = [
  {
    name: "Authentication",
    description:
      "Org login, user login, admin login, internal and impersonation tokens, credential regeneration.",
  },
  {
    name: "Organization Management",
    description: "Organizations (admin), own-org settings, the org request and approval flow.",
  },
  { name: "SIP Trunks", description: "Carrier trunks of an organization." },
  {
    name: "DID Numbers",
    description: "Phone numbers of an organization and their inbound routing.",
  },
  { name: "Users", description: "SIP users (extensions) of an organization." },
  { name: "Queues", description: "Call queues and their members." },
  { name: "Greetings", description: "Greeting audio of IVRs and queues." },
  { name: "Music on Hold", description: "Music-on-hold classes and files." },
  { name: "IVR", description: "IVR menus, menu options, text-to-speech greetings and publishing." },
  {
    name: "Outbound Routes",
    description: "Dial patterns sent to trunks, with digit manipulation and caller ID override.",
  },
  {
    name: "Call Management",
    description:
      "Call logs, live calls, recordings, click-to-call, AI originate, transfer, hold, hangup.",
  },
  {
    name: "Webhooks",
    description: "Signed HTTP callbacks for call, queue, user, trunk and CRM events.",
  },
  {
    name: "Configuration Management",
    description: "Generating, deploying and reloading engine configuration.",
  },
  { name: "CRM", description: "Leads and clients (`/crm/*`)." },
  { name: "API Keys", description: "Granular per-org `ak_` keys (`/api-keys`) with permissions." },
  {
    name: "Ticket Alerts",
    description: "Ticket alert settings of an organization (`/orgs/{orgId}/ticket-alerts`).",
  },
  {
    name: "WhatsApp Admin",
    description: "Messaging provider administration (`/admin/whatsapp/*`).",
  },
  {
    name: "DID Pool",
    description: "The shared pool of numbers, requests and approvals (`/did-pool/*`).",
  },
  {
    name: "Customer Tunnels",
    description: "Private tunnels to customer deployments (`/customer-tunnels/*`).",
  },
  {
    name: "Platform Users",
    description: "People who sign in to an organization, with roles (`/org-users`).",
  },
  { name: "Compliance", description: "Retention, consent and audit (`/compliance`)." },
  { name: "Settings", description: "Organization-level service settings (`/settings`)." },
  {
    name: "Time Conditions",
    description:
      "Business-hours schedules in a time zone, with holidays, that calls are routed through.",
  },
] as const;

export type TagName = (typeof TAGS)[number]["name"];
