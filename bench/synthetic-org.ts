// Deterministic synthetic orgs for benchmarks: the TARGETS.md workload is 50 users, 5 queues,
// 5 IVRs with 6 options and 20 DIDs per org.
import type { OrgState } from "../src/model/org-state.js";

export interface OrgSize {
  users: number;
  queues: number;
  ivrs: number;
  dids: number;
}

export const TARGET_SIZE: OrgSize = { users: 50, queues: 5, ivrs: 5, dids: 20 };

const hex = (n: number, width: number) => n.toString(16).padStart(width, "0");
const uuid = (kind: number, org: number, item = 0) =>
  `${hex(org, 8)}-${hex(kind, 4)}-4000-8000-${hex(item, 12)}`;

/** The `index`-th synthetic org; the same index always gives the same org. */
export function syntheticOrg(index: number, size: OrgSize = TARGET_SIZE): OrgState {
  const id = uuid(0, index);
  const prefix = `org_${id}_`;
  const users = Array.from({ length: size.users }, (_, u) => ({
    id: uuid(1, index, u),
    extension: String(1000 + u),
    name: `User ${u} of org ${index}`,
    routing_type: u === 0 ? ("ai_agent" as const) : ("human" as const),
    status: "active" as const,
    ring_target: u % 10 === 9 ? ("phone" as const) : ("ext" as const),
    phone_number: u % 10 === 9 ? `+9198${String(index * 100 + u).padStart(8, "0")}` : null,
    ring_time: 30,
    outbound_did: null,
    call_recording: u % 3 !== 0,
    sip: { md5_cred: hex(index * 1000 + u, 32) },
  }));
  const queues = Array.from({ length: size.queues }, (_, q) => ({
    id: uuid(2, index, q),
    number: String(6000 + q),
    name: `Queue ${q}`,
    strategy: "rrmemory" as const,
    moh: "default",
    max_wait: 300,
    timeout_destination_type: "user" as const,
    timeout_destination: "1001",
    members: users
      .slice(q * 5, q * 5 + 5)
      .map((u) => ({ extension: u.extension, penalty: 0, ring_time: 20 })),
  }));
  const ivrs = Array.from({ length: size.ivrs }, (_, v) => ({
    id: uuid(3, index, v),
    name: `Menu ${v}`,
    extension: String(5000 + v),
    description: "",
    timeout: 10,
    max_retries: 3,
    status: "active" as const,
    greeting_language: "en-IN",
    greeting_voice: "en-IN-Wavenet-D",
    greeting_prompt: `greeting_ivr_${uuid(3, index, v)}`,
    direct_extension_dial: v === 0,
    options: [
      { digit: "1", action_type: "extension", action_destination: "1001", description: "" },
      {
        digit: "2",
        action_type: "queue",
        action_destination: queues[v % size.queues]?.number ?? "6000",
        description: "",
      },
      {
        digit: "3",
        action_type: "ivr",
        action_destination: String(5000 + ((v + 1) % size.ivrs)),
        description: "",
      },
      { digit: "4", action_type: "ai_agent", action_destination: "1000", description: "" },
      { digit: "5", action_type: "callback", action_destination: "+919812345678", description: "" },
      { digit: "0", action_type: "hangup", action_destination: null, description: "" },
    ],
  }));
  const dids = Array.from({ length: size.dids }, (_, d) => ({
    id: uuid(4, index, d),
    number: `+9180${String(index * 100 + d).padStart(8, "0")}`,
    status: "active" as const,
    pool_status: "assigned" as const,
    is_default: d === 0,
    routing_type: d % 2 === 0 ? ("ivr" as const) : ("queue" as const),
    routing_destination:
      d % 2 === 0 ? uuid(3, index, d % size.ivrs) : String(6000 + (d % size.queues)),
    routing_environment: "prod" as const,
  }));
  return {
    org: {
      id,
      name: `Org ${index}`,
      context_prefix: prefix,
      status: "active",
      settings: { recording_enabled: true, max_concurrent_calls: 20 },
    },
    users,
    queues,
    ivrs: size.ivrs > 0 ? ivrs : [],
    dids,
    trunks: [
      {
        name: "carrier",
        // Its own carrier address (198.18.0.0/15, the benchmarking range): an address one org's
        // trunk matches may not be another org's.
        host: `198.${18 + ((index >> 16) & 1)}.${(index >> 8) & 255}.${index & 255}`,
        port: 5060,
        transport: "udp",
        username: `acme${index}`,
        registration: true,
        codecs: ["ulaw", "alaw"],
        match: [],
      },
    ],
    outbound_routes: [
      {
        name: "India",
        patterns: ["_0XXXXXXXXXX", "_91XXXXXXXXXX"],
        trunk: "carrier",
        strip_digits: 0,
        prepend_digits: "",
        caller_id_override: null,
      },
    ],
    time_conditions: [],
  };
}
