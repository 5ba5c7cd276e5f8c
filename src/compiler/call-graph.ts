// The org's call graph as a picture: DID -> IVR -> option -> queue -> member, queue timeouts,
// users, phones, voicemail. Built from the compiler's routing functions (what the dialplan
// does), printed as Mermaid or Graphviz DOT text; SVG is DOT rendered by Graphviz (domain).

import { compareAscii } from "../model/caller-id.js";
import { assertNever } from "../model/destinations.js";
import type { OrgState } from "../model/org-state.js";
import { digitsOnly, internationalDigits } from "../model/phone.js";
import { isUsableDid } from "../model/refs.js";
import { exceptionDays, rangeText } from "../model/time-conditions.js";
import {
  type Destination,
  didDestination,
  isPublished,
  isReachableUser,
  menuOptions,
  optionDestination,
  queueTimeoutDestination,
  timeConditionDestination,
} from "./routing.js";

export type NodeKind =
  | "did"
  | "ivr"
  | "queue"
  | "user"
  | "phone"
  | "voicemail"
  | "callback"
  | "time_condition"
  | "end";

export interface GraphNode {
  id: string;
  kind: NodeKind;
  label: string;
  /** Not in the running dialplan (an inactive IVR or user): drawn dashed. */
  absent?: boolean;
}

export interface GraphEdge {
  from: string;
  to: string;
  label: string;
}

export interface CallGraph {
  title: string;
  nodes: GraphNode[];
  edges: GraphEdge[];
}

/** The call graph of one org, nodes and edges in a stable order. */
export function buildCallGraph(state: OrgState): CallGraph {
  const nodes = new Map<string, GraphNode>();
  const edges: GraphEdge[] = [];
  const node = (n: GraphNode) => {
    if (!nodes.has(n.id)) nodes.set(n.id, n);
    return n.id;
  };
  const target = (destination: Destination): string => {
    switch (destination.kind) {
      case "user": {
        const { user } = destination;
        const label = `user ${user.extension}\n${user.name}${user.ring_target === "phone" ? `\nmobile ${user.phone_number}` : ""}`;
        return node({
          id: `user_${user.extension}`,
          kind: "user",
          label,
          ...(isReachableUser(user) ? {} : { absent: true }),
        });
      }
      case "queue":
        return node({
          id: `queue_${destination.queue.number}`,
          kind: "queue",
          label: `queue ${destination.queue.number}\n${destination.queue.name}`,
        });
      case "ivr":
        return node({
          id: `ivr_${destination.ivr.extension}`,
          kind: "ivr",
          label: `IVR ${destination.ivr.extension}\n${destination.ivr.name}`,
          ...(isPublished(destination.ivr) ? {} : { absent: true }),
        });
      case "phone":
        return node({
          id: `phone_${digitsOnly(destination.number)}`,
          kind: "phone",
          label: `phone ${destination.number}`,
        });
      case "voicemail":
        return node({
          id: `vm_${destination.mailbox}`,
          kind: "voicemail",
          label: `voicemail ${destination.mailbox}`,
        });
      case "callback":
        return node({ id: "callback", kind: "callback", label: "callback request" });
      case "time_condition": {
        const tc = destination.timeCondition;
        // Names may hold `-`, which a DOT identifier may not: the node is named by position.
        return node({
          id: `tc_${state.time_conditions.indexOf(tc)}`,
          kind: "time_condition",
          label: `time condition ${tc.name}\n${tc.time_zone}`,
        });
      }
      case "hangup":
        return node({ id: "goodbye", kind: "end", label: "goodbye" });
      case "end":
        return node({ id: "hangup", kind: "end", label: "hang up" });
      case "not_in_service":
        return node({ id: "not_in_service", kind: "end", label: "not in service" });
      case "invalid":
        return node({ id: "invalid", kind: "end", label: "invalid destination" });
      default:
        return assertNever(destination);
    }
  };
  const dids = state.dids
    .filter(isUsableDid)
    .sort((a, b) => compareAscii(internationalDigits(a.number), internationalDigits(b.number)));
  for (const did of dids) {
    const from = node({
      id: `did_${internationalDigits(did.number)}`,
      kind: "did",
      label: `DID ${did.number}`,
    });
    edges.push({ from, to: target(didDestination(state, did)), label: "" });
  }
  const ivrs = [...state.ivrs].sort((a, b) => compareAscii(a.extension, b.extension));
  for (const ivr of ivrs) {
    const from = target({ kind: "ivr", ivr });
    if (!isPublished(ivr)) continue; // its options never run
    for (const { option } of menuOptions(ivr)) {
      const destination = optionDestination(state, ivr, option);
      if (destination.kind === "invalid") continue; // not written to the dialplan
      edges.push({ from, to: target(destination), label: `press ${option.digit}` });
    }
    edges.push({
      from,
      to: target({ kind: "hangup" }),
      label: `no valid digit after ${ivr.max_retries} tries`,
    });
  }
  const queues = [...state.queues].sort((a, b) => compareAscii(a.number, b.number));
  for (const queue of queues) {
    const from = target({ kind: "queue", queue });
    for (const member of [...queue.members].sort((a, b) =>
      compareAscii(a.extension, b.extension),
    )) {
      const user = state.users.find((u) => u.extension === member.extension);
      if (!isReachableUser(user)) continue;
      edges.push({
        from,
        to: target({ kind: "user", user }),
        label: `rings ${member.ring_time} s`,
      });
    }
    if (queue.max_wait > 0) {
      edges.push({
        from,
        to: target(queueTimeoutDestination(state, queue)),
        label: `timeout ${queue.max_wait} s`,
      });
    }
  }
  const timeConditions = [...state.time_conditions].sort((a, b) => compareAscii(a.name, b.name));
  for (const tc of timeConditions) {
    const from = target({ kind: "time_condition", timeCondition: tc });
    const hours = tc.ranges.length > 0 ? tc.ranges.map(rangeText).join("; ") : "never";
    edges.push({
      from,
      to: target(timeConditionDestination(state, tc, { branch: "open" })),
      label: `open ${hours}`,
    });
    edges.push({
      from,
      to: target(timeConditionDestination(state, tc, { branch: "closed" })),
      label: "closed",
    });
    tc.exceptions.forEach((exception, index) => {
      if (exception.destination_type === null) return; // takes the closed edge
      edges.push({
        from,
        to: target(timeConditionDestination(state, tc, { branch: "exception", index, exception })),
        label: exceptionDays(exception),
      });
    });
  }
  return { title: state.org.name, nodes: [...nodes.values()], edges };
}

/** Mermaid text in double quotes: `"` becomes an entity, line breaks `<br>`. */
function mermaidText(text: string): string {
  return `"${text.replace(/&/g, "#amp;").replace(/"/g, "#quot;").replace(/</g, "#lt;").replace(/>/g, "#gt;").replace(/\n/g, "<br>")}"`;
}

const MERMAID_SHAPES: Record<NodeKind, [string, string]> = {
  did: ["([", "])"],
  ivr: ["{{", "}}"],
  queue: ["[[", "]]"],
  user: ["[", "]"],
  phone: [">", "]"],
  voicemail: ["[(", ")]"],
  callback: [">", "]"],
  time_condition: ["{", "}"],
  end: ["((", "))"],
};

/** The graph as a Mermaid flowchart (renders on GitHub and in most Markdown viewers). */
export function toMermaid(graph: CallGraph): string {
  const lines = ["flowchart LR"];
  for (const n of graph.nodes) {
    const [open, close] = MERMAID_SHAPES[n.kind];
    lines.push(
      `  ${n.id}${open}${mermaidText(n.absent ? `${n.label}\n(inactive)` : n.label)}${close}`,
    );
  }
  for (const e of graph.edges) {
    lines.push(
      e.label ? `  ${e.from} -->|${mermaidText(e.label)}| ${e.to}` : `  ${e.from} --> ${e.to}`,
    );
  }
  const absent = graph.nodes.filter((n) => n.absent).map((n) => n.id);
  if (absent.length > 0) {
    lines.push("  classDef absent stroke-dasharray: 5 5,color:#888");
    lines.push(`  class ${absent.join(",")} absent`);
  }
  return `${lines.join("\n")}\n`;
}

/** A DOT string literal: backslashes and quotes escaped, line breaks as `\n`. */
function dotText(text: string): string {
  return `"${text.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n")}"`;
}

const DOT_SHAPES: Record<NodeKind, string> = {
  did: "oval",
  ivr: "hexagon",
  queue: "box3d",
  user: "box",
  phone: "cds",
  voicemail: "cylinder",
  callback: "cds",
  time_condition: "diamond",
  end: "circle",
};

/** The graph as Graphviz DOT. */
export function toDot(graph: CallGraph): string {
  const lines = [
    `digraph ${dotText(graph.title)} {`,
    "  rankdir=LR;",
    '  node [fontname="Helvetica", fontsize=11];',
    '  edge [fontname="Helvetica", fontsize=9];',
  ];
  for (const n of graph.nodes) {
    const style = n.absent ? ", style=dashed, fontcolor=gray40" : "";
    const label = n.absent ? `${n.label}\n(inactive)` : n.label;
    lines.push(`  ${n.id} [label=${dotText(label)}, shape=${DOT_SHAPES[n.kind]}${style}];`);
  }
  for (const e of graph.edges) {
    lines.push(`  ${e.from} -> ${e.to}${e.label ? ` [label=${dotText(e.label)}]` : ""};`);
  }
  lines.push("}");
  return `${lines.join("\n")}\n`;
}
