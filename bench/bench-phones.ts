// Phones the bench can register: synthetic orgs carry an arbitrary digest (no password behind
// it), so the engine bench gives every user a known password, derived from its org and
// extension, and stores the digest of it as the API would (`md5(<endpoint id>:pbxctl:<pw>)`).
import { createHash } from "node:crypto";
import type { OrgState } from "../src/model/org-state.js";
import { SIP_REALM } from "../src/model/sip-realm.js";
import type { SippPhone } from "./sipp-registrations.js";
import { syntheticOrg } from "./synthetic-org.js";

const passwordOf = (endpointId: string) =>
  createHash("sha256").update(`bench-phone:${endpointId}`).digest("hex").slice(0, 20);

/** The org with every user's SIP digest made from its known bench password. */
export function withPhonePasswords(org: OrgState): OrgState {
  const prefix = org.org.context_prefix;
  return {
    ...org,
    users: org.users.map((user) => {
      const id = `${prefix}${user.extension}`;
      const md5 = createHash("md5")
        .update(`${id}:${SIP_REALM}:${passwordOf(id)}`)
        .digest("hex");
      return { ...user, sip: { md5_cred: md5 } };
    }),
  };
}

/** The first `count` users of the first synthetic orgs (of `orgCount`), as phones. */
export function benchPhones(orgCount: number, count: number): SippPhone[] {
  const phones: SippPhone[] = [];
  for (let i = 0; i < orgCount && phones.length < count; i++) {
    const org = syntheticOrg(i);
    for (const user of org.users) {
      if (phones.length === count) break;
      const id = `${org.org.context_prefix}${user.extension}`;
      phones.push({ user: id, password: passwordOf(id) });
    }
  }
  return phones;
}
