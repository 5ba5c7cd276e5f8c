// One outgoing JSON POST for pbxctl's own HTTP calls: ticket messages and workflow triggers
// (tickets/messaging.ts), the intake poller (tickets/poller.ts) and an alert's test send
// (api/routes/ticket-alerts.ts). Each caller keeps its own rules: its timeout, whether a redirect
// is followed (a target a user typed never is: a redirect could lead past the URL guard that
// checked it), and its headers. Webhooks have their own keep-alive client with the SSRF guard on
// the connected address (webhooks/http-client.ts). Like clock.ts, it sits beside the layers.

/** POSTs one JSON body; resolves with the HTTP status, rejects when there is no answer. */
export type HttpPost = (
  url: string,
  body: string,
  headers: Record<string, string>,
) => Promise<number>;

export interface HttpPostOptions {
  /** Give up (reject) after this long. */
  timeoutMs: number;
  /** `manual` answers a redirect as its 3xx status instead of following it. */
  redirect: "manual" | "follow";
}

/** A POST with `content-type: application/json` unless the caller's headers name another. */
export function createHttpPost(options: HttpPostOptions): HttpPost {
  return async (url, body, headers) => {
    const named = Object.keys(headers).some((name) => name.toLowerCase() === "content-type");
    const res = await fetch(url, {
      method: "POST",
      headers: named ? headers : { "content-type": "application/json", ...headers },
      body,
      redirect: options.redirect,
      signal: AbortSignal.timeout(options.timeoutMs),
    });
    // Read the answer to the end so the connection is released.
    await res.arrayBuffer();
    return res.status;
  };
}
