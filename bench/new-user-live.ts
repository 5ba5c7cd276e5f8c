// How soon a user created through the API is live, from the API's answer, as a phone sees it:
//  - registrable: a phone (bench/sip-phone.ts) REGISTERs as the new user with the password the
//    API returned, one exchange after another (never a flood) until the engine answers 200;
//  - callable: then a call into the org's internal context (where its phones' calls start:
//    AMI Originate of `Local/<extension>@<prefix>internal`, as a colleague dialling it) is
//    attempted every CALL_POLL_MS until an INVITE reaches that phone. The extension exists only
//    once the org's dialplan is reloaded, so this is the dialplan's deploy in both PJSIP modes.
// In realtime mode the PJSIP part is also split where pbxctl's time goes, each step of the
// deployer's path (RealtimeStep: sync started -> org state loaded and compiled -> current rows
// read -> rows committed -> cache expiries sent -> endpoints verified) timed from the API's
// answer (negative: before the answer, the save's hook runs as soon as it commits).
import { performance } from "node:perf_hooks";
import type { RealtimeStep } from "../src/deploy/realtime-pjsip.js";
import type { SipPhone } from "./sip-phone.js";

export interface NewUserSample {
  registrableMs: number;
  /** Null when the sample measured only registrable. */
  callableMs: number | null;
  /** Realtime mode: answer -> each step of the deployer's path for this save, else empty. */
  steps: Partial<Record<RealtimeStep, number>>;
}

/** When the realtime deployer reached each step for the bench's org (performance.now()). */
export type RealtimeTimeline = Record<RealtimeStep, number[]>;

export const REALTIME_STEPS: readonly RealtimeStep[] = [
  "sync",
  "compiled",
  "read",
  "committed",
  "expired",
  "verified",
];

export interface NewUserProbe {
  /** Creates the user; resolves when the API answered, with the phone to register as it. */
  createUser(extension: string): Promise<{ sentAt: number; answeredAt: number; phone: SipPhone }>;
  /** One call attempt to the extension into the org's internal context. */
  call(extension: string): Promise<void>;
  timeline: RealtimeTimeline | null;
}

const REGISTER_POLL_MS = 10;
const CALL_POLL_MS = 50;
const GIVE_UP_MS = 600_000;
const delay = (t: number) => new Promise((r) => setTimeout(r, t));

export async function measureNewUser(
  probe: NewUserProbe,
  extension: string,
  options: { callable: boolean },
): Promise<NewUserSample> {
  const { sentAt, answeredAt, phone } = await probe.createUser(extension);
  try {
    const deadline = answeredAt + GIVE_UP_MS;
    let registeredAt = 0;
    for (;;) {
      if ((await phone.register()) === 200) {
        registeredAt = performance.now();
        break;
      }
      if (performance.now() > deadline) throw new Error(`${extension} never registered`);
      await delay(REGISTER_POLL_MS);
    }
    while (options.callable && phone.invites.length === 0) {
      if (performance.now() > deadline) throw new Error(`${extension} never reached by a call`);
      await probe.call(extension);
      const waitUntil = performance.now() + CALL_POLL_MS;
      while (phone.invites.length === 0 && performance.now() < waitUntil) await delay(5);
    }
    // Each step the first time it was reached after the step before it (the first after the
    // request was sent): this save's path, or the one it was coalesced into, and never the end
    // of a previous save's flush.
    const steps: Partial<Record<RealtimeStep, number>> = {};
    let since = sentAt;
    for (const step of REALTIME_STEPS) {
      const first = probe.timeline?.[step].find((t) => t >= since);
      if (first === undefined) break;
      steps[step] = first - answeredAt;
      since = first;
    }
    return {
      registrableMs: registeredAt - answeredAt,
      callableMs: options.callable ? phone.invites[0]! - answeredAt : null,
      steps,
    };
  } finally {
    await phone.close();
  }
}
