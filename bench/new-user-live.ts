// How soon a user created through the API is live, from the API's answer, as a phone sees it:
//  - registrable: a phone (bench/sip-phone.ts) REGISTERs as the new user with the password the
//    API returned, one exchange after another (never a flood) until the engine answers 200;
//  - callable: then a call into the org's internal context (where its phones' calls start:
//    AMI Originate of `Local/<extension>@<prefix>internal`, as a colleague dialling it) is
//    attempted every CALL_POLL_MS until an INVITE reaches that phone. The extension exists only
//    once the org's dialplan is reloaded, so this is the dialplan's deploy in both PJSIP modes.
// In realtime mode the PJSIP part is also split where pbxctl's time goes: API answer -> the
// first cache expiry sent (rows compiled and committed) -> the endpoint verified over AMI.
import { performance } from "node:perf_hooks";
import type { SipPhone } from "./sip-phone.js";

export interface NewUserSample {
  registrableMs: number;
  /** Null when the sample measured only registrable. */
  callableMs: number | null;
  /** Realtime mode: answer -> first `SorceryMemoryCacheExpireObject` sent, else null. */
  expirySentMs: number | null;
  /** Realtime mode: answer -> the endpoint verified (`pjsip show endpoint`), else null. */
  verifiedMs: number | null;
}

/** When the realtime deployer sent each cache expiry and finished each verification. */
export interface RealtimeTimeline {
  expiriesSent: number[];
  verified: number[];
}

export interface NewUserProbe {
  /** Creates the user; resolves when the API answered, with the phone to register as it. */
  createUser(extension: string): Promise<{ answeredAt: number; phone: SipPhone }>;
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
  const { answeredAt, phone } = await probe.createUser(extension);
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
    const after = (times: number[] | undefined) => {
      const first = times?.find((t) => t >= answeredAt);
      return first === undefined ? null : first - answeredAt;
    };
    return {
      registrableMs: registeredAt - answeredAt,
      callableMs: options.callable ? phone.invites[0]! - answeredAt : null,
      expirySentMs: after(probe.timeline?.expiriesSent),
      verifiedMs: after(probe.timeline?.verified),
    };
  } finally {
    await phone.close();
  }
}
