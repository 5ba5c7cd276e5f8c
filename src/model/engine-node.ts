// An engine node's fields (issue 25, docs/nodes.md): the one schema the admin API, `pbxctl nodes`
// and the domain's checks share. Nothing here reaches Asterisk syntax: the AMI fields are how
// pbxctl logs in (the secret is one AMI header, so no control character or space may pass), the
// SIP address is what the edge forwards to.
import { Type } from "@sinclair/typebox";
import { Host, PRINTABLE_ASCII, Slug } from "./org-state.js";

export const NODE_STATES = ["active", "draining", "down"] as const;
export type NodeState = (typeof NODE_STATES)[number];

/** host or host:port; a host as the model's `Host` (name, IPv4 or [IPv6]). */
export const SIP_ADDRESS = "^([A-Za-z0-9.-]{1,253}|\\[[0-9A-Fa-f:.]{2,45}\\])(:[0-9]{1,5})?$";
export const SIP_ADDRESS_RULE =
  "must be host or host:port (10.0.0.11, pbx-2.example.com:5060, [2001:db8::2]:5060)";
export const AMI_USERNAME = "^[A-Za-z0-9._+@-]{1,64}$";

export const MAX_NODE_CAPACITY = 100_000;

export const EngineNodeFields = {
  name: Type.String({
    pattern: Slug.pattern,
    description: "unique: lowercase letters, digits and -, at most 63",
  }),
  ami_host: Type.String({
    pattern: Host.pattern,
    description: "where the node's AMI listens: host name, IPv4 or [IPv6]",
  }),
  ami_port: Type.Integer({ minimum: 1, maximum: 65535, description: "default 5038" }),
  ami_username: Type.String({ pattern: AMI_USERNAME, description: "the manager.conf user" }),
  ami_secret: Type.String({
    pattern: PRINTABLE_ASCII,
    maxLength: 128,
    description: "stored sealed; never answered",
  }),
  sip_address: Type.String({
    pattern: SIP_ADDRESS,
    description: "host[:port] the SIP edge forwards the node's orgs to",
  }),
  capacity: Type.Integer({
    minimum: 1,
    maximum: MAX_NODE_CAPACITY,
    description: "how many orgs the node takes as their primary node",
  }),
  state: Type.Union(
    NODE_STATES.map((s) => Type.Literal(s)),
    {
      description:
        "`active` takes new orgs; `draining` keeps its orgs and takes no new one; `down` is known unreachable",
    },
  ),
};
