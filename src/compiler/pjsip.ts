// An org's PJSIP objects: one endpoint, auth and aor per user (named with the org's context
// prefix), and per trunk an endpoint, aor, optional outbound auth, identify and registration.
// They are typed objects with raw values, printed two ways: as pjsip.conf sections (file mode,
// `buildPjsip`) or as rows of Asterisk's realtime tables (pjsip-realtime.ts).
// SIP passwords of users never appear: only `password_digest=md5:<hash>` (ASTERISK.md "PJSIP").
import { compareAscii } from "../model/caller-id.js";
import { type OrgState, SIP_REALM, type Trunk, type User } from "../model/org-state.js";
import { identifyMatches } from "../model/trunk-identify.js";
import { assertToken, commentText, dialplanText, pjsipValue } from "./escape.js";
import { orgMohClass } from "./musiconhold.js";
import { type OrgNames, orgNames } from "./names.js";
import type { Diagnostic, OrgCompileOptions } from "./types.js";
import type { ConfigOption, SectionsView } from "./views.js";

/** The PJSIP object types pbxctl generates (sorcery's type names). */
export type PjsipObjectType = "endpoint" | "auth" | "aor" | "identify" | "registration";

/**
 * One PJSIP object. `fields` are the options after `type=`, in the order written, with raw
 * values: never escaped for a file, but never holding a control character either (`field`).
 */
export interface PjsipObject {
  type: PjsipObjectType;
  id: string;
  /** For pjsip.conf readers only (a row has no comments). */
  comments: string[];
  fields: ConfigOption[];
}

/** The objects of one user, or of one trunk, in the order they are written. */
export interface PjsipOwnerObjects {
  owner: { kind: "user"; extension: string } | { kind: "trunk"; name: string };
  objects: PjsipObject[];
}

/** A raw value; a control character could end a line of pjsip.conf or hide in a row. */
function field(key: string, value: string | number): ConfigOption {
  const text = String(value);
  if (/[\u0000-\u001f\u007f]/.test(text)) throw new Error("control character in a PJSIP value");
  return { key, value: text };
}

function object(
  type: PjsipObjectType,
  id: string,
  fields: ConfigOption[],
  comments: string[] = [],
): PjsipObject {
  return { type, id: assertToken(id, "section"), comments: comments.map(commentText), fields };
}

function userObjects(
  state: OrgState,
  names: OrgNames,
  user: User,
  md5: string,
  options: OrgCompileOptions,
): PjsipObject[] {
  const name = names.endpoint(user.extension);
  const mohClass = orgMohClass(state);
  const display = dialplanText(user.name) || user.extension;
  return [
    object(
      "endpoint",
      name,
      [
        field("context", names.internal),
        field("disallow", "all"),
        field("allow", "ulaw,alaw,g722"),
        field("auth", name),
        field("aors", name),
        // CDR accountcode: call listings are scoped by it (SPEC.md §1, isolation rule 3).
        field("accountcode", state.org.id),
        field("callerid", `"${display}" <${user.extension}>`),
        // The bare extension, set by the server and not by the phone: outbound caller ID and
        // recording are looked up by it.
        field("set_var", `CALLER_EXT=${user.extension}`),
        field("direct_media", "no"),
        field("rtp_symmetric", "yes"),
        field("force_rport", "yes"),
        field("rewrite_contact", "yes"),
        // The class the other party hears when this phone puts a call on hold.
        ...(mohClass ? [field("moh_suggest", mohClass)] : []),
      ],
      [`user ${user.name}`],
    ),
    object("auth", name, [
      field("auth_type", "digest"),
      field("username", name),
      field("realm", SIP_REALM),
      field("password_digest", `md5:${assertToken(md5, "md5 digest")}`),
    ]),
    object("aor", name, [
      field("max_contacts", 5),
      field("remove_existing", "yes"),
      // Behind the edge the REGISTER carries a Path: keep it, so requests to the phone go back
      // through the edge (which knows where the phone really is).
      ...(options.behindEdge ? [field("support_path", "yes")] : []),
    ]),
  ];
}

function sipUri(trunk: Trunk, user?: string): string {
  const transport = trunk.transport === "udp" ? "" : `;transport=${trunk.transport}`;
  return `sip:${user ? `${user}@` : ""}${trunk.host}:${trunk.port}${transport}`;
}

function trunkObjects(
  state: OrgState,
  names: OrgNames,
  trunk: Trunk,
  diagnostics: Diagnostic[],
  path: string,
): PjsipObject[] {
  const name = names.trunk(trunk.name);
  const hasAuth = trunk.username !== null && trunk.password !== undefined;
  const endpoint = [
    field("context", names.incoming),
    field("disallow", "all"),
    field("allow", trunk.codecs.join(",")),
    field("aors", name),
    field("accountcode", state.org.id),
    field("direct_media", "no"),
    field("rtp_symmetric", "yes"),
    field("force_rport", "yes"),
  ];
  if (hasAuth) endpoint.push(field("outbound_auth", name));
  if (trunk.username !== null) endpoint.push(field("from_user", trunk.username));
  const objects: PjsipObject[] = [
    object("endpoint", name, endpoint, [`trunk ${trunk.name}`]),
    object("aor", name, [field("contact", sipUri(trunk))]),
  ];
  if (hasAuth) {
    objects.push(
      object("auth", name, [
        field("auth_type", "digest"),
        field("username", trunk.username!),
        field("password", trunk.password!),
      ]),
    );
  }
  // Inbound traffic is matched by source address, plus the explicit `match` list. Asterisk
  // resolves host names in `match` once, at load, and warns for a name that does not resolve;
  // a registering trunk is identified by its line anyway, so its host is added only when it is
  // an address. A trunk that does not register has nothing else: its host is always added.
  const match = identifyMatches(trunk);
  if (match.length > 0) {
    objects.push(
      object("identify", name, [field("endpoint", name), field("match", match.join(","))]),
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
        field("server_uri", sipUri(trunk)),
        field("client_uri", sipUri(trunk, trunk.username)),
        field("contact_user", trunk.username),
        field("retry_interval", 60),
        field("expiration", 3600),
        field("endpoint", name),
        field("line", "yes"),
      ];
      if (hasAuth) registration.push(field("outbound_auth", name));
      objects.push(object("registration", name, registration));
    }
  }
  return objects;
}

/**
 * Every PJSIP object of an org, grouped by the user or trunk that owns it: users by extension,
 * then trunks by name (the file order). Inactive users have none.
 */
export function pjsipObjects(
  state: OrgState,
  diagnostics: Diagnostic[],
  options: OrgCompileOptions = {},
): PjsipOwnerObjects[] {
  const names = orgNames(state.org.context_prefix);
  const owners: PjsipOwnerObjects[] = [];
  const users = state.users
    .map((user, index) => ({ user, index }))
    .filter(({ user }) => user.status === "active")
    .sort((a, b) => compareAscii(a.user.extension, b.user.extension));
  for (const { user, index } of users) {
    const md5 = user.sip?.md5_cred;
    if (md5) {
      owners.push({
        owner: { kind: "user", extension: user.extension },
        objects: userObjects(state, names, user, md5, options),
      });
    } else if (user.ring_target === "ext") {
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
    owners.push({
      owner: { kind: "trunk", name: trunk.name },
      objects: trunkObjects(state, names, trunk, diagnostics, `trunks[${index}]`),
    });
  }
  return owners;
}

/** The header line of an org's pjsip.conf. */
export function pjsipHeader(state: OrgState): string[] {
  return [
    `generated by pbxctl for org ${commentText(state.org.name)} (${state.org.id}). Do not edit`,
  ];
}

/**
 * Objects as pjsip.conf sections: `type=` first, then the fields, each value escaped for the
 * file (`;` would start a comment).
 */
export function pjsipSections(header: string[], objects: readonly PjsipObject[]): SectionsView {
  return {
    header,
    sections: objects.map((o) => ({
      name: o.id,
      comments: o.comments,
      options: [
        { key: "type", value: o.type },
        ...o.fields.map((f) => ({ key: f.key, value: pjsipValue(f.value) })),
      ],
    })),
  };
}

/** The org's pjsip.conf view (file mode). */
export function buildPjsip(
  state: OrgState,
  diagnostics: Diagnostic[],
  options: OrgCompileOptions = {},
): SectionsView {
  const objects = pjsipObjects(state, diagnostics, options).flatMap((owner) => owner.objects);
  return pjsipSections(pjsipHeader(state), objects);
}
