// `org move` (issue 25, docs/nodes.md): the node an org leaves tells each of the org's
// registered phones to re-register (behind the SIP edge, the new registration reaches the org's
// new node). AMI `PJSIPNotify` (res_pjsip_notify) with `Variable: Event=check-sync` sends a NOTIFY
// carrying that header to every contact of the endpoint; a phone that honours check-sync
// re-registers (most also re-read their provisioning). Asterisk 22's answers are recorded in
// fixtures/ami/call-control.json (test/engine/call-control.test.ts) and replayed by the fake AMI.
import type { AmiMessage } from "./ami-connection.js";

/** The one thing sent: the event header of the NOTIFY. */
export const CHECK_SYNC = "Event=check-sync";

/** A PJSIP object name as the compiler writes them (context prefix + extension). */
const ENDPOINT_NAME = /^[A-Za-z0-9_.-]{1,80}$/;

/** What sends one AMI action and answers with its response (an AmiConnection). */
export interface AmiActions {
  action(fields: Record<string, string>): Promise<AmiMessage>;
}

/**
 * Asks the engine to send endpoint `endpoint` a NOTIFY check-sync; true when the engine sent it,
 * false when it refused (the endpoint is gone, or has no contact).
 */
export async function notifyCheckSync(ami: AmiActions, endpoint: string): Promise<boolean> {
  // The names come from the engine's own registration events; anything else is not sent.
  if (!ENDPOINT_NAME.test(endpoint)) return false;
  const answer = await ami.action({
    Action: "PJSIPNotify",
    Endpoint: endpoint,
    Variable: CHECK_SYNC,
  });
  return String(answer.response ?? "").toLowerCase() === "success";
}
