// One bench phone on a loopback UDP port: it sends a REGISTER with digest authentication (the
// engine's challenge answered with MD5, qop=auth as PJSIP asks) and answers every INVITE with
// 486, noting when it arrived. A few lines of SIP instead of a spawned sipsak per attempt: a
// spawn costs milliseconds on a loaded machine, more than the realtime figure being measured.
import { createHash, randomBytes } from "node:crypto";
import { createSocket } from "node:dgram";
import { performance } from "node:perf_hooks";

export interface SipPhoneOptions {
  /** The endpoint id, which is also the auth username (`<prefix><extension>`). */
  user: string;
  password: string;
  realm: string;
  registrar: { host: string; port: number };
}

export interface SipPhone {
  readonly port: number;
  /** One REGISTER exchange (challenge answered once): the final status, 408 when none came. */
  register(): Promise<number>;
  /** performance.now() of each INVITE this phone received. */
  readonly invites: readonly number[];
  close(): Promise<void>;
}

const ANSWER_TIMEOUT_MS = 2000;
const md5 = (text: string) => createHash("md5").update(text).digest("hex");

interface SipMessage {
  start: string;
  headers: [string, string][];
}

function parse(text: string): SipMessage {
  const [start = "", ...lines] = text.split("\r\n\r\n")[0]!.split("\r\n");
  const headers: [string, string][] = [];
  for (const line of lines) {
    const colon = line.indexOf(":");
    if (colon > 0)
      headers.push([line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim()]);
  }
  return { start, headers };
}
const header = (message: SipMessage, name: string) =>
  message.headers.find(([key]) => key === name)?.[1] ?? "";

/** The digest parameters of a `WWW-Authenticate: Digest a="b", c=d` header. */
function digestParams(value: string): Record<string, string> {
  const params: Record<string, string> = {};
  for (const match of value.replace(/^Digest\s+/i, "").matchAll(/(\w+)=("([^"]*)"|[^,\s]+)/g)) {
    params[match[1]!.toLowerCase()] = match[3] ?? match[2]!;
  }
  return params;
}

export async function startSipPhone(options: SipPhoneOptions): Promise<SipPhone> {
  const socket = createSocket("udp4");
  await new Promise<void>((resolve, reject) => {
    socket.once("error", reject);
    socket.bind(0, "127.0.0.1", () => resolve());
  });
  const port = socket.address().port;
  const { host, port: registrarPort } = options.registrar;
  const callId = `${randomBytes(8).toString("hex")}@bench`;
  const tag = randomBytes(4).toString("hex");
  const invites: number[] = [];
  let cseq = 0;
  const waiting = new Map<number, (status: number, message: SipMessage) => void>();

  const send = (text: string) =>
    new Promise<void>((resolve, reject) =>
      socket.send(text, registrarPort, host, (error) => (error ? reject(error) : resolve())),
    );

  socket.on("message", (buffer) => {
    const message = parse(buffer.toString("utf8"));
    const status = /^SIP\/2\.0 (\d{3})/.exec(message.start);
    if (status) {
      const code = Number(status[1]);
      if (code < 200) return;
      const answered = waiting.get(Number.parseInt(header(message, "cseq"), 10));
      answered?.(code, message);
      return;
    }
    const method = message.start.split(" ")[0];
    if (method === "ACK") return;
    if (method === "INVITE") invites.push(performance.now());
    // INVITE: busy (only its arrival is measured); anything else (OPTIONS): 200.
    const code = method === "INVITE" ? "486 Busy Here" : "200 OK";
    const copied = message.headers
      .filter(([key]) => ["via", "from", "call-id", "cseq"].includes(key))
      .map(([key, value]) => `${key}: ${value}`);
    const to = header(message, "to");
    void send(
      [
        `SIP/2.0 ${code}`,
        ...copied,
        `To: ${to.includes("tag=") ? to : `${to};tag=${tag}`}`,
        "Content-Length: 0",
        "",
        "",
      ].join("\r\n"),
    ).catch(() => {});
  });

  const request = async (authorization: string | null) => {
    cseq++;
    const number = cseq;
    const uri = `sip:${host}:${registrarPort}`;
    const answer = new Promise<{ status: number; message: SipMessage | null }>((resolve) => {
      const timer = setTimeout(() => {
        waiting.delete(number);
        resolve({ status: 408, message: null });
      }, ANSWER_TIMEOUT_MS);
      waiting.set(number, (status, message) => {
        clearTimeout(timer);
        waiting.delete(number);
        resolve({ status, message });
      });
    });
    await send(
      [
        `REGISTER ${uri} SIP/2.0`,
        `Via: SIP/2.0/UDP 127.0.0.1:${port};branch=z9hG4bK${randomBytes(6).toString("hex")};rport`,
        "Max-Forwards: 70",
        `From: <sip:${options.user}@${host}>;tag=${tag}`,
        `To: <sip:${options.user}@${host}>`,
        `Call-ID: ${callId}`,
        `CSeq: ${number} REGISTER`,
        `Contact: <sip:${options.user}@127.0.0.1:${port}>`,
        "Expires: 3600",
        ...(authorization ? [`Authorization: ${authorization}`] : []),
        "Content-Length: 0",
        "",
        "",
      ].join("\r\n"),
    );
    return { ...(await answer), uri };
  };

  return {
    port,
    invites,
    async register() {
      const first = await request(null);
      if (first.status !== 401 || !first.message) return first.status;
      const challenge = digestParams(header(first.message, "www-authenticate"));
      const ha1 = md5(`${options.user}:${challenge.realm ?? options.realm}:${options.password}`);
      const ha2 = md5(`REGISTER:${first.uri}`);
      const cnonce = randomBytes(8).toString("hex");
      const qop = challenge.qop?.split(",").includes("auth") ? "auth" : null;
      const response = qop
        ? md5(`${ha1}:${challenge.nonce}:00000001:${cnonce}:auth:${ha2}`)
        : md5(`${ha1}:${challenge.nonce}:${ha2}`);
      const fields = [
        `username="${options.user}"`,
        `realm="${challenge.realm ?? options.realm}"`,
        `nonce="${challenge.nonce}"`,
        `uri="${first.uri}"`,
        `response="${response}"`,
        "algorithm=MD5",
        ...(challenge.opaque !== undefined ? [`opaque="${challenge.opaque}"`] : []),
        ...(qop ? [`qop=auth`, `nc=00000001`, `cnonce="${cnonce}"`] : []),
      ];
      return (await request(`Digest ${fields.join(", ")}`)).status;
    },
    close: () => new Promise<void>((resolve) => socket.close(() => resolve())),
  };
}
