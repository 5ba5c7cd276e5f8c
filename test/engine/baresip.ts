// A real SIP phone for the engine suite: Debian's baresip in its own temp config dir, listening on
// a free loopback port, with no sound card (a silent WAV as microphone, no speaker), driven over its
// `ctrl_tcp` interface (netstring-framed JSON: commands in, responses and events out) and killed by
// PID whatever happens.
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { closeSync, existsSync, openSync, readFileSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { connect, createServer, type Socket } from "node:net";
import { join } from "node:path";
import { freeLoopbackPort } from "../../src/engine/testing/asterisk-instance.js";
import { killOnExit } from "../../src/kill-on-exit.js";
import { encodeWav } from "../../src/tts/wav.js";

/** One SIP account: registers `user` at `registrar` (host:port) with the digest password. */
export interface BaresipAccount {
  user: string;
  password: string;
  registrar: string;
  /** The loopback address the phone sends from (default 127.0.0.1). */
  listenHost?: string;
  /** false: no REGISTER, the account only places calls (a carrier's side). Default true. */
  register?: boolean;
}

/** An event baresip reported (`REGISTER_OK`, `REGISTER_FAIL`, `CALL_ESTABLISHED`, ...). */
export interface BaresipEvent {
  type: string;
  class?: string;
  accountaor?: string;
  param?: string;
  [field: string]: unknown;
}

export interface Baresip {
  readonly pid: number;
  readonly sipPort: number;
  /** Every event so far, in order. */
  readonly events: readonly BaresipEvent[];
  /** Runs a command of baresip's menu (`dial`, `sndcode`, `hangup`, ...) and returns its answer. */
  command(command: string, params?: string): Promise<string>;
  /** Resolves with the first event (from index `since` of `events`) matching, or throws after `timeoutMs`. */
  waitForEvent(
    match: (event: BaresipEvent) => boolean,
    options?: { since?: number; timeoutMs?: number },
  ): Promise<BaresipEvent>;
  /** baresip's own output so far (for failure messages). */
  output(): string;
  /** Kills the process by PID and removes its config dir. */
  stop(): Promise<void>;
}

/** Where Debian's baresip keeps its modules (`baresip-core`), or an error naming the package. */
export function baresipModuleDir(): string {
  const candidates = ["/usr/lib/baresip/modules", "/usr/local/lib/baresip/modules"];
  try {
    const listed = execFileSync("dpkg", ["-L", "baresip-core"], { encoding: "utf8" });
    const g711 = listed.split("\n").find((line) => line.endsWith("/g711.so"));
    if (g711) candidates.unshift(join(g711, ".."));
  } catch {
    // not a Debian system: the usual paths only
  }
  const found = candidates.find((dir) => existsSync(join(dir, "ctrl_tcp.so")));
  if (!found) {
    throw new Error("baresip's modules (ctrl_tcp.so) not found: install Debian's baresip-core");
  }
  return found;
}

/** Whether `port` is free for TCP on 127.0.0.1. */
function tcpPortFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once("error", () => resolve(false));
    server.listen(port, "127.0.0.1", () => server.close(() => resolve(true)));
  });
}

/** A SIP port whose successor is free too: baresip also listens for SIP over TLS on port + 1. */
async function sipPortPair(): Promise<number> {
  for (let attempt = 0; attempt < 20; attempt++) {
    const port = await freeLoopbackPort();
    if (port < 65535 && (await tcpPortFree(port + 1))) return port;
  }
  throw new Error("no free loopback port pair for baresip");
}

/** Netstring framing (`<length>:<bytes>,`) of ctrl_tcp. */
function frame(json: unknown): string {
  const body = Buffer.from(JSON.stringify(json));
  return `${body.length}:${body.toString()},`;
}

function* unframe(buffer: { data: Buffer }): Generator<unknown> {
  for (;;) {
    const colon = buffer.data.indexOf(":");
    if (colon < 0) return;
    const length = Number(buffer.data.subarray(0, colon).toString());
    if (buffer.data.length < colon + 1 + length + 1) return;
    const body = buffer.data.subarray(colon + 1, colon + 1 + length).toString();
    buffer.data = buffer.data.subarray(colon + 1 + length + 1);
    yield JSON.parse(body);
  }
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Registers once as `account`: what baresip reported (`REGISTER_OK` or `REGISTER_FAIL`); the phone is stopped after. */
export async function registrationOutcome(account: BaresipAccount): Promise<string> {
  const phone = await startBaresip(account);
  try {
    return (await phone.waitForEvent((e) => /^REGISTER_(OK|FAIL)$/.test(e.type))).type;
  } finally {
    await phone.stop();
  }
}

/** Starts baresip with `account` and connects to its control port. */
export async function startBaresip(account: BaresipAccount): Promise<Baresip> {
  const dir = await mkdtemp("/tmp/pbxb-");
  const sipPort = await sipPortPair();
  const ctrlPort = await freeLoopbackPort(new Set([sipPort, sipPort + 1]));
  // The microphone: 30 s of silence at 8 kHz, the only rate baresip's aufile accepts here.
  const microphone = join(dir, "silence.wav");
  await writeFile(microphone, encodeWav(new Int16Array(8000 * 30), 8000));
  // Only what the test needs: G.711 (the endpoints allow ulaw/alaw), a file as audio source, no
  // player (baresip then plays nothing), the menu commands and the TCP control interface.
  await writeFile(
    join(dir, "config"),
    [
      "poll_method epoll",
      `sip_listen ${account.listenHost ?? "127.0.0.1"}:${sipPort}`,
      `audio_source aufile,${microphone}`,
      "audio_player none,none",
      "audio_alert none,none",
      `module_path ${baresipModuleDir()}`,
      "module g711.so",
      "module aufile.so",
      "module_app menu.so",
      "module_app ctrl_tcp.so",
      `ctrl_tcp_listen 127.0.0.1:${ctrlPort}`,
      "",
    ].join("\n"),
  );
  // No account file (nor its module): baresip would register before the control connection is
  // up and its REGISTER_OK/FAIL event would be lost. The account is added over ctrl_tcp below.
  await writeFile(join(dir, "accounts"), "");
  await writeFile(join(dir, "contacts"), "");

  const logFile = join(dir, "baresip.log");
  const out = openSync(logFile, "a");
  const child: ChildProcess = spawn("baresip", ["-f", dir], { stdio: ["ignore", out, out] });
  closeSync(out);
  const pid = child.pid ?? -1;
  killOnExit(child);
  let exited = false;
  child.once("exit", () => {
    exited = true;
  });
  let spawnError = "";
  child.once("error", (error) => {
    exited = true;
    spawnError = `${error.message} (install Debian's baresip)\n`;
  });
  const output = () => spawnError + (existsSync(logFile) ? readFileSync(logFile, "utf8") : "");

  const events: BaresipEvent[] = [];
  const waiting = new Map<string, (answer: string) => void>();
  let socket: Socket | null = null;
  let token = 0;

  const stop = async () => {
    socket?.destroy();
    if (!exited && pid > 0) {
      try {
        process.kill(pid, "SIGKILL");
      } catch {}
      for (let i = 0; i < 100 && !exited; i++) await delay(20);
    }
    await rm(dir, { recursive: true, force: true });
  };

  try {
    for (let attempt = 0; socket === null; attempt++) {
      if (exited) throw new Error(`baresip exited at start:\n${output()}`);
      if (attempt > 200) throw new Error(`baresip's ctrl_tcp did not listen in 10 s:\n${output()}`);
      socket = await new Promise<Socket | null>((resolve) => {
        const s = connect(ctrlPort, "127.0.0.1");
        s.once("connect", () => resolve(s));
        s.once("error", () => resolve(null));
      });
      if (!socket) await delay(50);
    }
  } catch (error) {
    await stop();
    throw error;
  }
  const control: Socket = socket;
  const buffer = { data: Buffer.alloc(0) };
  control.on("data", (chunk: Buffer) => {
    buffer.data = Buffer.concat([buffer.data, chunk]);
    for (const message of unframe(buffer)) {
      const m = message as Record<string, unknown>;
      if (m.event === true) events.push(m as BaresipEvent);
      else if (m.response === true && typeof m.token === "string") {
        waiting.get(m.token)?.(String(m.data ?? ""));
        waiting.delete(m.token);
      }
    }
  });

  const phone: Baresip = {
    pid,
    sipPort,
    events,
    command(command, params = "") {
      const id = String(++token);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          waiting.delete(id);
          reject(new Error(`baresip did not answer "${command} ${params}" in 5 s`));
        }, 5000);
        waiting.set(id, (answer) => {
          clearTimeout(timer);
          resolve(answer);
        });
        control.write(frame({ command, params, token: id }));
      });
    },
    async waitForEvent(match, { since = 0, timeoutMs = 15_000 } = {}) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const found = events.slice(since).find(match);
        if (found) return found;
        if (exited) throw new Error(`baresip exited:\n${output().slice(-3000)}`);
        if (Date.now() > deadline) {
          throw new Error(
            `timed out waiting for a baresip event; events: ${JSON.stringify(events.slice(since))}\n${output().slice(-3000)}`,
          );
        }
        await delay(50);
      }
    },
    output,
    stop,
  };
  try {
    // regint: one registration that lasts the whole test (0: none at all).
    const regint = account.register === false ? 0 : 600;
    await phone.command(
      "uanew",
      `<sip:${account.user}@${account.registrar};transport=udp>;auth_pass=${account.password};regint=${regint}`,
    );
  } catch (error) {
    await stop();
    throw error;
  }
  return phone;
}
