// The flags `pbxctl nodes add` and `nodes update` share, and their translation to the node
// use cases' input. The AMI secret may come from a file so it stays out of shell history and
// the process list.
import { readFileSync } from "node:fs";
import { Args, Flags } from "@oclif/core";
import type { EngineNodeInput } from "../../domain/nodes/engine-nodes.js";
import { NODE_STATES } from "../../model/engine-node.js";
import { CommandFailure } from "./base-command.js";

export const nodeArg = {
  node: Args.string({ required: true, description: "The node's name (or id)." }),
};

export const nodeFieldFlags = {
  "ami-host": Flags.string({ summary: "Host of the node's AMI (add: default 127.0.0.1)." }),
  "ami-port": Flags.integer({
    min: 1,
    max: 65535,
    summary: "Port of the node's AMI (add: default 5038).",
  }),
  "ami-user": Flags.string({ summary: "AMI user (manager.conf) pbxctl logs in as." }),
  "ami-secret": Flags.string({
    summary: "AMI secret; stored sealed, never shown.",
    exclusive: ["ami-secret-file"],
  }),
  "ami-secret-file": Flags.file({
    exists: true,
    summary: "File whose first line is the AMI secret (keeps it out of the process list).",
    exclusive: ["ami-secret"],
  }),
  "sip-address": Flags.string({ summary: "host[:port] the SIP edge forwards the node's orgs to." }),
  capacity: Flags.integer({ min: 1, summary: "How many orgs the node takes as their primary." }),
  state: Flags.option({
    options: NODE_STATES,
    summary: "active (takes new orgs), draining (keeps its orgs, takes no new one) or down.",
  })(),
};

type FieldFlags = {
  "ami-host"?: string;
  "ami-port"?: number;
  "ami-user"?: string;
  "ami-secret"?: string;
  "ami-secret-file"?: string;
  "sip-address"?: string;
  capacity?: number;
  state?: (typeof NODE_STATES)[number];
};

function secretOf(flags: FieldFlags): string | undefined {
  if (flags["ami-secret"] !== undefined) return flags["ami-secret"];
  const file = flags["ami-secret-file"];
  if (file === undefined) return undefined;
  const secret = readFileSync(file, "utf8").split(/\r?\n/)[0] ?? "";
  if (secret === "")
    throw new CommandFailure(`--ami-secret-file ${file} holds no secret on its first line`);
  return secret;
}

/** The input the flags given say (absent flags are absent fields). */
export function nodeInputOf(flags: FieldFlags): EngineNodeInput {
  const input: EngineNodeInput = {
    ami_host: flags["ami-host"],
    ami_port: flags["ami-port"],
    ami_username: flags["ami-user"],
    ami_secret: secretOf(flags),
    sip_address: flags["sip-address"],
    capacity: flags.capacity,
    state: flags.state,
  };
  return Object.fromEntries(
    Object.entries(input).filter(([, v]) => v !== undefined),
  ) as EngineNodeInput;
}
