// Builds small, valid OrgStates for tests: schema defaults and omitted ids filled the way a file
// load does, so each test only writes what it is about.
import { fillOmitted } from "../../src/model/fill.js";
import type { OrgState } from "../../src/model/org-state.js";
import { checkOrgFileSchema } from "../../src/model/schema-check.js";

export const ORG_ID = "11111111-2222-4333-8444-555555555555";
export const MD5 = "0123456789abcdef0123456789abcdef";

/** Raw org data as a file would hold it, edited freely before the schema checks it. */
// biome-ignore lint/suspicious/noExplicitAny: tests poke at arbitrary fields of raw data
export type RawOrg = Record<string, any>;

/** A valid org with two users, a queue, an IVR and a DID; `edit` changes the raw data first. */
export function makeState(edit: (data: RawOrg) => void = () => {}): OrgState {
  const data: RawOrg = {
    org: { id: ORG_ID, name: "Acme" },
    users: [
      { extension: "1001", name: "Alice", sip: { md5_cred: MD5 } },
      { extension: "1002", name: "Bot", routing_type: "ai_agent", sip: { md5_cred: MD5 } },
    ],
    queues: [{ number: "2000", name: "Sales", members: [{ extension: "1001" }] }],
    ivrs: [
      {
        name: "Main",
        extension: "3000",
        options: [{ digit: "1", action_type: "queue", action_destination: "2000" }],
      },
    ],
    dids: [
      {
        number: "+918065978001",
        is_default: true,
        routing_type: "ivr",
        routing_destination: "3000",
      },
    ],
    trunks: [{ name: "carrier", host: "sip.example.net" }],
    outbound_routes: [{ name: "All", patterns: ["_X."], trunk: "carrier" }],
  };
  edit(data);
  const problems = checkOrgFileSchema(data);
  if (problems.length > 0)
    throw new Error(`fixture breaks the schema: ${JSON.stringify(problems)}`);
  return fillOmitted(data as OrgState);
}
