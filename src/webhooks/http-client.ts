// The narrow HTTP interface the dispatcher needs (one POST with a timeout), and its node:http
// implementation: keep-alive sockets, no redirects followed, and the SSRF guard applied to the
// addresses actually connected to.
import { lookup as dnsLookup, type LookupAddress, type LookupAllOptions } from "node:dns";
import http from "node:http";
import https from "node:https";
import { isIP, type LookupFunction } from "node:net";
import { ERROR_TEXT_MAX } from "./policy.js";
import { isNonPublicAddress, PRIVATE_TARGET_MESSAGE } from "./url-guard.js";

export interface WebhookHttpResponse {
  status: number;
  /** The `Retry-After` header, if any. */
  retryAfter: string | null;
  /** The start of the answer's body, for `last_error`. */
  bodySnippet: string;
}

/** POSTs `body`; resolves with any HTTP answer, rejects when there is none (network, timeout). */
export interface WebhookHttpClient {
  post(
    url: string,
    body: string,
    headers: Record<string, string>,
    timeoutMs: number,
  ): Promise<WebhookHttpResponse>;
}

export interface NodeHttpClient extends WebhookHttpClient {
  /** Closes idle keep-alive sockets. */
  close(): void;
}

function guardedLookup(): LookupFunction {
  return (hostname, options, callback) => {
    const all: LookupAllOptions = { ...options, all: true };
    dnsLookup(hostname, all, (error, addresses: LookupAddress[]) => {
      if (error) return callback(error, "", 0);
      if (addresses.some((a) => isNonPublicAddress(a.address))) {
        return callback(new Error(PRIVATE_TARGET_MESSAGE), "", 0);
      }
      if (options.all) {
        return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, addresses);
      }
      const first = addresses[0];
      if (!first) return callback(new Error(`no address for ${hostname}`), "", 0);
      callback(null, first.address, first.family);
    });
  };
}

/** A client over node:http(s) with keep-alive; `allowPrivate` lifts the SSRF guard. */
export function createNodeHttpClient(
  options: { allowPrivate: boolean; maxSockets?: number } = { allowPrivate: false },
): NodeHttpClient {
  const agentOptions = { keepAlive: true, maxSockets: options.maxSockets ?? 64 };
  const agents = { http: new http.Agent(agentOptions), https: new https.Agent(agentOptions) };
  const lookup = options.allowPrivate ? undefined : guardedLookup();

  return {
    post(url, body, headers, timeoutMs) {
      return new Promise<WebhookHttpResponse>((resolve, reject) => {
        const target = new URL(url);
        const secure = target.protocol === "https:";
        const host = target.hostname.replace(/^\[|\]$/g, "");
        if (!options.allowPrivate && isIP(host) && isNonPublicAddress(host)) {
          reject(new Error(PRIVATE_TARGET_MESSAGE));
          return;
        }
        const payload = Buffer.from(body, "utf8");
        const request = (secure ? https : http).request(target, {
          method: "POST",
          agent: secure ? agents.https : agents.http,
          headers: { ...headers, "content-length": String(payload.length) },
          ...(lookup ? { lookup } : {}),
        });
        const timer = setTimeout(() => {
          request.destroy(new Error(`timed out after ${timeoutMs} ms`));
        }, timeoutMs);
        request.on("error", (error) => {
          clearTimeout(timer);
          reject(error);
        });
        request.on("response", (response) => {
          let snippet = "";
          response.setEncoding("utf8");
          response.on("data", (chunk: string) => {
            if (snippet.length < ERROR_TEXT_MAX) snippet += chunk.slice(0, ERROR_TEXT_MAX);
          });
          response.on("end", () => {
            clearTimeout(timer);
            const retryAfter = response.headers["retry-after"];
            resolve({
              status: response.statusCode ?? 0,
              retryAfter: typeof retryAfter === "string" ? retryAfter : null,
              bodySnippet: snippet.slice(0, ERROR_TEXT_MAX),
            });
          });
          response.on("error", (error) => {
            clearTimeout(timer);
            reject(error);
          });
        });
        request.end(payload);
      });
    },
    close() {
      agents.http.destroy();
      agents.https.destroy();
    },
  };
}
