// An org's pjsip.conf: one endpoint, auth and aor per user (named with the org's context prefix),
// and per trunk an endpoint, aor, optional outbound auth, identify and registration.
// SIP passwords of users never appear: only `password_digest=md5:<hash>` (ASTERISK.md "PJSIP").

import { compareAscii } from "../model/caller-id.js";
import { type OrgState, SIP_REALM, type Trunk, type User } from "../model/org-state.js";
import { identifyMatches } from "../model/trunk-identify.js";
import { assertToken, commentText, dialplanText, pjsipValue } from "./escape.js";
import { orgMohClass } from "./musiconhold.js";
import { type OrgNames, orgNames } from "./names.js";
import type { Diagnostic } from "./types.js";
import type { ConfigOption, ConfigSection, SectionsView } from "./views.js";

const opt = (key: string, value: string | number): ConfigOption => ({ key, value: String(value) });

function section(name: string, options: ConfigOption[], comments: string[] = []): ConfigSection {
  return { name: assertToken(name, "section"), comments: comments.map(commentText), options };
}

function userSections(state: OrgState, names: OrgNames, user: User, md5: string): ConfigSection[] {
  const name = names.endpoint(user.extension);
  const mohClass = orgMohClass(state);
  const display = dialplanText(user.name) || user.extension;
  return [
    section(
      name,
      [
        opt("type", "endpoint"),
        opt("context", names.internal),
        opt("disallow", "all"),
        opt("allow", "ulaw,alaw,g722"),
        opt("auth", name),
        opt("aors", name),
        // CDR accountcode: call listings are scoped by it (SPEC.md §1, isolation rule 3).
        opt("accountcode", state.org.id),
        opt("callerid", pjsipValue(`"${display}" <${user.extension}>`)),
        // The bare extension, set by the server and not by the phone: outbound caller ID and
        // recording are looked up by it.
        opt("set_var", `CALLER_EXT=${user.extension}`),
        opt("direct_media", "no"),
        opt("rtp_symmetric", "yes"),
        opt("force_rport", "yes"),
        opt("rewrite_contact", "yes"),
        // The class the other party hears when this phone puts a call on hold.
        ...(mohClass ? [opt("moh_suggest", mohClass)] : []),
      ],
      [`user ${user.name}`],
    ),
    section(name, [
      opt("type", "auth"),
      opt("auth_type", "digest"),
      opt("username", name),
      opt("realm", SIP_REALM),
      opt("password_digest", `md5:${assertToken(md5, "md5 digest")}`),
    ]),
    section(name, [opt("type", "aor"), opt("max_contacts", 5), opt("remove_existing", "yes")]),
  ];
}

function sipUri(trunk: Trunk, user?: string): string {
  const transport = trunk.transport === "udp" ? "" : `;transport=${trunk.transport}`;
  return pjsipValue(`sip:${user ? `${user}@` : ""}${trunk.host}:${trunk.port}${transport}`);
}

function trunkSections(
  state: OrgState,
  names: OrgNames,
  trunk: Trunk,
  diagnostics: Diagnostic[],
  path: string,
): ConfigSection[] {
  const name = names.trunk(trunk.name);
  const hasAuth = trunk.username !== null && trunk.password !== undefined;
  const endpoint = [
    opt("type", "endpoint"),
    opt("context", names.incoming),
    opt("disallow", "all"),
    opt("allow", trunk.codecs.join(",")),
    opt("aors", name),
    opt("accountcode", state.org.id),
    opt("direct_media", "no"),
    opt("rtp_symmetric", "yes"),
    opt("force_rport", "yes"),
  ];
  if (hasAuth) endpoint.push(opt("outbound_auth", name));
  if (trunk.username !== null) endpoint.push(opt("from_user", pjsipValue(trunk.username)));
  const sections = [
    section(name, endpoint, [`trunk ${trunk.name}`]),
    section(name, [opt("type", "aor"), opt("contact", sipUri(trunk))]),
  ];
  if (hasAuth) {
    sections.push(
      section(name, [
        opt("type", "auth"),
        opt("auth_type", "digest"),
        opt("username", pjsipValue(trunk.username!)),
        opt("password", pjsipValue(trunk.password!)),
      ]),
    );
  }
  // Inbound traffic is matched by source address, plus the explicit `match` list. Asterisk
  // resolves host names in `match` once, at load, and warns for a name that does not resolve;
  // a registering trunk is identified by its line anyway, so its host is added only when it is
  // an address. A trunk that does not register has nothing else: its host is always added.
  const match = identifyMatches(trunk);
  if (match.length > 0) {
    sections.push(
      section(name, [
        opt("type", "identify"),
        opt("endpoint", name),
        opt("match", match.join(",")),
      ]),
    );
  }
  if (trunk.registration) {
    if (trunk.username === null) {
      diagnostics.push({
        severity: "error",
        path: `${path}.username`,
        message: "registration needs a username",
      });
    } else {
      const registration = [
        opt("type", "registration"),
        opt("server_uri", sipUri(trunk)),
        opt("client_uri", sipUri(trunk, trunk.username)),
        opt("contact_user", pjsipValue(trunk.username)),
        opt("retry_interval", 60),
        opt("expiration", 3600),
        opt("endpoint", name),
        opt("line", "yes"),
      ];
      if (hasAuth) registration.push(opt("outbound_auth", name));
      sections.push(section(name, registration));
    }
  }
  return sections;
}

/** The org's pjsip.conf view. */
export function buildPjsip(state: OrgState, diagnostics: Diagnostic[]): SectionsView {
  const names = orgNames(state.org.context_prefix);
  const sections: ConfigSection[] = [];
  const users = state.users
    .map((user, index) => ({ user, index }))
    .filter(({ user }) => user.status === "active")
    .sort((a, b) => compareAscii(a.user.extension, b.user.extension));
  for (const { user, index } of users) {
    const md5 = user.sip?.md5_cred;
    if (md5) sections.push(...userSections(state, names, user, md5));
    else if (user.ring_target === "ext") {
      diagnostics.push({
        severity: "error",
        path: `users[${index}].sip`,
        message: "a softphone user needs a SIP credential (md5_cred)",
      });
    }
  }
  const trunks = state.trunks
    .map((trunk, index) => ({ trunk, index }))
    .sort((a, b) => compareAscii(a.trunk.name, b.trunk.name));
  for (const { trunk, index } of trunks) {
    sections.push(...trunkSections(state, names, trunk, diagnostics, `trunks[${index}]`));
  }
  return {
    header: [
      `generated by pbxctl for org ${commentText(state.org.name)} (${state.org.id}). Do not edit`,
    ],
    sections,
  };
}
