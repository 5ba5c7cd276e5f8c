// What an approved org starts with (SPEC.md §3): a trunk, an outbound route through it and a
// first extension with a generated SIP password (returned once, stored only as an MD5 digest).
import { createHash, randomBytes } from "node:crypto";
import { SIP_REALM } from "../model/org-state.js";
import type { Db } from "../store/database.js";
import { createExtensionClaimRepository } from "../store/extension-claim-repository.js";
import { createOutboundRouteRepository } from "../store/outbound-route-repository.js";
import type { OrganizationRow } from "../store/schema.js";
import { createTrunkRepository } from "../store/trunk-repository.js";
import { createUserRepository } from "../store/user-repository.js";

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

/**
 * The SIP auth username of a user's endpoint. It must equal the compiler's endpoint name
 * (`orgNames(prefix).endpoint(ext)` in src/compiler/names.ts): the digest covers it.
 */
export function sipUsername(contextPrefix: string, extension: string): string {
  return `${contextPrefix}${extension}`;
}

/** Hex MD5 of `username:realm:password`, as PJSIP's `password_digest` wants it. */
export function sipMd5Credential(username: string, password: string): string {
  return createHash("md5").update(`${username}:${SIP_REALM}:${password}`).digest("hex");
}

/** Creates the starter trunk, route and extension inside the caller's transaction. */
export async function provisionStarterResources(
  trx: Db,
  org: OrganizationRow,
  options: { trunkHost: string; ownerName: string },
): Promise<ProvisionedResources> {
  const trunk = await createTrunkRepository(trx).insert(org.id, {
    name: DEFAULT_TRUNK_NAME,
    host: options.trunkHost,
    port: 5060,
    transport: "udp",
    username: null,
    registration: false,
    codecs: ["ulaw", "alaw"],
    match: [],
  });
  const route = await createOutboundRouteRepository(trx).insert(org.id, {
    name: "Default outbound",
    patterns: ["_X."],
    trunk: trunk.name,
    strip_digits: 0,
    prepend_digits: "",
    caller_id_override: null,
  });
  const password = randomBytes(12).toString("base64url");
  const username = sipUsername(org.context_prefix, FIRST_EXTENSION);
  const user = await createUserRepository(trx).insert(org.id, {
    extension: FIRST_EXTENSION,
    name: options.ownerName,
    routing_type: "human",
    status: "active",
    ring_target: "ext",
    phone_number: null,
    ring_time: 30,
    outbound_did: null,
    call_recording: true,
    sip: { md5_cred: sipMd5Credential(username, password) },
  });
  const claim = await createExtensionClaimRepository(trx).claim(org.id, FIRST_EXTENSION, {
    type: "user",
    id: user.id,
  });
  if (!claim.claimed)
    throw new Error(`extension ${FIRST_EXTENSION} already taken in new org ${org.id}`);
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
