// A stand-in carrier for the engine suites: a SIP UAS on a loopback UDP port that records every
// INVITE it receives (request URI and From, i.e. the number dialled and the caller ID the
// carrier would see) and refuses the call with 486 Busy Here, so an outbound Dial ends at once.
// It is also the carrier's registrar: each REGISTER is recorded and answered `registerAnswer`
// (200 OK, echoing the Contact with its expiry, or a refusal such as 403 Forbidden).
import { createSocket, type Socket } from "node:dgram";

export interface CarrierInvite {
  /** The user part of the request URI: the number dialled. */
  number: string;
  /** The user part of the From URI: the caller ID sent. */
  callerId: string;
  raw: string;
}

function header(message: string, name: string): string {
  const match = new RegExp(`^${name}:\\s*(.*)$`, "im").exec(message);
  return match?.[1]?.trim() ?? "";
}

export class FakeCarrier {
  readonly invites: CarrierInvite[] = [];
  /** The From user of each REGISTER received. */
  readonly registers: string[] = [];
  /** How REGISTERs are answered: `200 OK` (registered) or a refusal (`403 Forbidden`). */
  registerAnswer = "200 OK";
  private readonly socket: Socket = createSocket("udp4");

  /**
   * Listens on `host` (another loopback address than the phones' 127.0.0.1 keeps the trunk's
   * identify match from claiming the phones' own requests).
   */
  async listen(port: number, host = "127.0.0.1"): Promise<void> {
    this.socket.on("message", (buffer, remote) => {
      const message = buffer.toString("utf8");
      const [requestLine = ""] = message.split("\r\n");
      if (requestLine.startsWith("REGISTER ")) {
        this.answerRegister(message, remote.port, remote.address);
        return;
      }
      if (!requestLine.startsWith("INVITE ")) return; // ACKs, OPTIONS: nothing to answer
      const number = /^INVITE sip:([^@;>]+)@/.exec(requestLine)?.[1] ?? "";
      const from = header(message, "From");
      const callerId = /sip:([^@;>]+)@/.exec(from)?.[1] ?? "";
      this.invites.push({ number, callerId, raw: message });
      const via = message
        .split("\r\n")
        .filter((line) => /^Via:/i.test(line))
        .join("\r\n");
      const reply = [
        "SIP/2.0 486 Busy Here",
        via,
        `From: ${from}`,
        `To: ${header(message, "To")};tag=carrier`,
        `Call-ID: ${header(message, "Call-ID")}`,
        `CSeq: ${header(message, "CSeq")}`,
        "Content-Length: 0",
        "",
        "",
      ].join("\r\n");
      this.socket.send(reply, remote.port, remote.address);
    });
    await new Promise<void>((resolve) => this.socket.bind(port, host, resolve));
  }

  private answerRegister(message: string, port: number, address: string) {
    const from = header(message, "From");
    this.registers.push(/sip:([^@;>]+)@/.exec(from)?.[1] ?? "");
    const via = message
      .split("\r\n")
      .filter((line) => /^Via:/i.test(line))
      .join("\r\n");
    const ok = this.registerAnswer.startsWith("200");
    const expires = header(message, "Expires") || "3600";
    const reply = [
      `SIP/2.0 ${this.registerAnswer}`,
      via,
      `From: ${from}`,
      `To: ${header(message, "To")};tag=registrar`,
      `Call-ID: ${header(message, "Call-ID")}`,
      `CSeq: ${header(message, "CSeq")}`,
      ...(ok ? [`Contact: ${header(message, "Contact")};expires=${expires}`] : []),
      "Content-Length: 0",
      "",
      "",
    ].join("\r\n");
    this.socket.send(reply, port, address);
  }

  /** Waits for the `count`-th INVITE (1-based) and returns it. */
  async invite(count: number, timeoutMs = 15_000): Promise<CarrierInvite> {
    const deadline = Date.now() + timeoutMs;
    while (this.invites.length < count) {
      if (Date.now() > deadline)
        throw new Error(`the carrier got ${this.invites.length} INVITEs, expected ${count}`);
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    return this.invites[count - 1]!;
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.socket.close(() => resolve()));
  }
}
