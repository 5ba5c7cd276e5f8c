// What an approved org starts with (SPEC.md §3): a trunk, an outbound route through it and a
// first extension with a generated SIP password (returned once, stored only as an MD5 digest).
import { withDefaults } from "../../model/defaults.js";
import { OutboundRoute, Trunk, User } from "../../model/org-state.js";
import type { OrganizationRecord } from "../../model/stored-records.js";
import type { Db } from "../../store/database.js";
import { createOutboundRouteRepository } from "../../store/outbound-route-repository.js";
import { createTrunkRepository } from "../../store/trunk-repository.js";
import { createUserRepository } from "../../store/user-repository.js";
import { claimExtension } from "../routing/extension-space.js";
import { generateSipPassword, sipCredential, sipUsernameOf } from "../users/sip-credentials.js";

export const FIRST_EXTENSION = "1001";
export const DEFAULT_TRUNK_NAME = "default";

export interface ProvisionedResources {
  trunk: { id: string; name: string; host: string };
  outbound_route: { id: string; name: string; patterns: string[] };
  extension: {
    id: string;
    extension: string;
    name: string;
    sip_username: string;
    sip_password: string;
  };
}

/** Creates the starter trunk, route and extension inside the caller's transaction. */
export async function provisionStarterResources(
  trx: Db,
  org: OrganizationRecord,
  options: { trunkHost: string; ownerName: string },
): Promise<ProvisionedResources> {
  const trunk = await createTrunkRepository(trx).insert(
    org.id,
    withDefaults(Trunk, { name: DEFAULT_TRUNK_NAME, host: options.trunkHost }),
  );
  const route = await createOutboundRouteRepository(trx).insert(
    org.id,
    withDefaults(OutboundRoute, {
      name: "Default outbound",
      patterns: ["_X."],
      trunk: trunk.name,
    }),
  );
  const password = generateSipPassword();
  const username = sipUsernameOf(org.context_prefix, FIRST_EXTENSION);
  const user = await createUserRepository(trx).insert(
    org.id,
    withDefaults(User, {
      extension: FIRST_EXTENSION,
      name: options.ownerName,
      sip: sipCredential(org.context_prefix, FIRST_EXTENSION, password),
    }),
  );
  await claimExtension(trx, org.id, FIRST_EXTENSION, { type: "user", id: user.id });
  return {
    trunk: { id: trunk.id, name: trunk.name, host: trunk.host },
    outbound_route: { id: route.id, name: route.name, patterns: route.patterns },
    extension: {
      id: user.id,
      extension: FIRST_EXTENSION,
      name: user.name,
      sip_username: username,
      sip_password: password,
    },
  };
}
