// A minimal SIP user agent over UDP for the edge suite: a phone, a carrier or a node's side of a
// request, bound to a chosen loopback address (the edge tells them apart by source address). It
// sends one request and resolves with its final answer; requests it receives are recorded and
// answered 486, so a transaction the edge forwards to it ends at once.
import { randomBytes } from "node:crypto";
import { createSocket, type Socket } from "node:dgram";

export interface SipMessage {
  /** `SIP/2.0 200 OK` or `INVITE sip:... SIP/2.0`. */
  start: string;
  status: number | null;
  /** Header values by lowercase name, in order. */
  headers: Map<string, string[]>;
  raw: string;
}

export interface Target {
  address: string;
  port: number;
}

export function parseSip(raw: string): SipMessage {
  const [head = ""] = raw.split("\r\n\r\n");
  const [start = "", ...lines] = head.split("\r\n");
  const headers = new Map<string, string[]>();
  for (const line of lines) {
    const colon = line.indexOf(":");
    if (colon < 0) continue;
    const name = line.slice(0, colon).trim().toLowerCase();
    headers.set(name, [...(headers.get(name) ?? []), line.slice(colon + 1).trim()]);
  }
  const status = /^SIP\/2\.0 (\d{3})/.exec(start)?.[1];
  return { start, status: status ? Number(status) : null, headers, raw };
}

export function header(message: SipMessage, name: string): string | undefined {
  return message.headers.get(name.toLowerCase())?.[0];
}

const token = () => randomBytes(6).toString("hex");

export interface RequestOptions {
  method: string;
  uri: string;
  fromUser: string;
  toUser: string;
  callId?: string;
  cseq?: number;
  fromTag?: string;
  toTag?: string;
  routes?: string[];
  extra?: string[];
  /** Appended to the Contact header (`;expires=60`). */
  contactParams?: string;
}

export class SipUa {
  readonly received: SipMessage[] = [];
  private readonly waiters = new Map<string, (message: SipMessage) => void>();

  private constructor(
    private readonly socket: Socket,
    readonly address: string,
    readonly port: number,
    private readonly edge: Target,
  ) {
    socket.on("message", (data) => this.onMessage(parseSip(data.toString())));
  }

  static open(address: string, edge: Target): Promise<SipUa> {
    return new Promise((resolve, reject) => {
      const socket = createSocket("udp4");
      socket.once("error", reject);
      socket.bind(0, address, () =>
        resolve(new SipUa(socket, address, socket.address().port, edge)),
      );
    });
  }

  /** Sends a request to the edge; resolves with its final answer (rejects after `timeoutMs`). */
  request(options: RequestOptions, timeoutMs = 8000): Promise<SipMessage> {
    const branch = `z9hG4bK${token()}`;
    const callId = options.callId ?? token();
    const lines = [
      `${options.method} ${options.uri} SIP/2.0`,
      `Via: SIP/2.0/UDP ${this.address}:${this.port};branch=${branch};rport`,
      ...(options.routes ?? []).map((route) => `Route: ${route}`),
      "Max-Forwards: 70",
      `From: <sip:${options.fromUser}@${this.edge.address}>;tag=${options.fromTag ?? token()}`,
      `To: <sip:${options.toUser}@${this.edge.address}>${options.toTag ? `;tag=${options.toTag}` : ""}`,
      `Call-ID: ${callId}`,
      `CSeq: ${options.cseq ?? 1} ${options.method}`,
      `Contact: <sip:${options.fromUser}@${this.address}:${this.port}>${options.contactParams ?? ""}`,
      ...(options.extra ?? []),
      "Content-Length: 0",
      "",
      "",
    ];
    const answer =
      options.method === "ACK"
        ? Promise.resolve(parseSip(""))
        : new Promise<SipMessage>((resolve, reject) => {
            const timer = setTimeout(() => {
              this.waiters.delete(branch);
              reject(new Error(`no final answer to ${options.method} ${options.uri}`));
            }, timeoutMs);
            this.waiters.set(branch, (message) => {
              clearTimeout(timer);
              // A refused INVITE is acknowledged in its own transaction (same branch, RFC 3261
              // 17.1.1.3), or the answering side keeps retransmitting its answer.
              if (options.method === "INVITE" && (message.status ?? 0) >= 300) {
                const ack = lines
                  .slice(0, lines.indexOf("Max-Forwards: 70") + 1)
                  .map((line) => line.replace(/^INVITE /, "ACK "))
                  .concat([
                    `From: ${header(message, "from")}`,
                    `To: ${header(message, "to")}`,
                    `Call-ID: ${callId}`,
                    `CSeq: ${options.cseq ?? 1} ACK`,
                    "Content-Length: 0",
                    "",
                    "",
                  ]);
                this.socket.send(ack.join("\r\n"), this.edge.port, this.edge.address);
              }
              resolve(message);
            });
          });
    this.socket.send(lines.join("\r\n"), this.edge.port, this.edge.address);
    return answer;
  }

  /**
   * An INVITE answered 200, then its ACK and BYE sent along the dialog's route set (the
   * Record-Route the edge put in, reversed for the caller): the BYE's answer is returned.
   */
  async call(options: Omit<RequestOptions, "method">): Promise<{
    answer: SipMessage;
    bye: SipMessage;
  }> {
    const callId = token();
    const fromTag = token();
    const answer = await this.request({ ...options, method: "INVITE", callId, fromTag });
    if (answer.status !== 200) throw new Error(`INVITE answered ${answer.start}`);
    const contact = /<([^>]+)>/.exec(header(answer, "contact") ?? "")?.[1] ?? "";
    const routes = [...(answer.headers.get("record-route") ?? [])]
      .flatMap((value) => value.split(/,\s*(?=<)/))
      .reverse();
    const toTag = /;tag=([^;>\s]+)/.exec(header(answer, "to") ?? "")?.[1] ?? "";
    const dialog = { ...options, uri: contact, callId, fromTag, toTag, routes };
    await this.request({ ...dialog, method: "ACK", cseq: 1 });
    const bye = await this.request({ ...dialog, method: "BYE", cseq: 2 });
    return { answer, bye };
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.socket.close(() => resolve()));
  }

  private onMessage(message: SipMessage): void {
    if (message.status === null) {
      this.received.push(message);
      if (!message.start.startsWith("ACK")) this.answer(message, "486 Busy Here");
      return;
    }
    if (message.status < 200) return;
    const branch = /branch=([^;\s]+)/.exec(header(message, "via") ?? "")?.[1] ?? "";
    const waiter = this.waiters.get(branch);
    this.waiters.delete(branch);
    waiter?.(message);
  }

  /** Answers a received request from where its top Via says it came. */
  private answer(request: SipMessage, status: string): void {
    const vias = request.headers.get("via") ?? [];
    const top = vias[0] ?? "";
    const sentBy = /SIP\/2\.0\/UDP ([^;:\s]+):?(\d+)?/.exec(top);
    const received = /received=([^;\s]+)/.exec(top)?.[1] ?? sentBy?.[1] ?? "";
    const rport = /rport=(\d+)/.exec(top)?.[1] ?? sentBy?.[2] ?? "5060";
    const lines = [
      `SIP/2.0 ${status}`,
      ...vias.map((via) => `Via: ${via}`),
      `From: ${header(request, "from")}`,
      `To: ${header(request, "to")};tag=${token()}`,
      `Call-ID: ${header(request, "call-id")}`,
      `CSeq: ${header(request, "cseq")}`,
      "Content-Length: 0",
      "",
      "",
    ];
    this.socket.send(lines.join("\r\n"), Number(rport), received);
  }
}
