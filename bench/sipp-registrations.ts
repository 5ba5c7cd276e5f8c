// Many phones registering at once, with SIPp from Debian's sip-tester (/usr/bin/sipp): one
// REGISTER scenario answering the engine's digest challenge (`[authentication]`), one call per
// phone read in order from an injection file (`-inf`, the user and its `[authentication
// username=... password=...]` keyword: SIPp takes no field inside that keyword), started at a given
// rate (`-r` calls per `-rp` ms). Each phone's response time is the whole exchange, first
// REGISTER to the final 200 (two round trips: the challenge and the authenticated one), as
// SIPp's response-time repartition records it (`-trace_rtt`, every sample: `-rtt_freq 1`).
// SIPp retransmits over UDP as phones do (T1 500 ms). Loopback only; the process is stopped by
// its PID if it outlives its bound.
import { spawn } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { freeLoopbackPort } from "../src/engine/testing/asterisk-instance.js";

export interface SippPhone {
  user: string;
  password: string;
}

export interface SippRegistrationRun {
  phones: number;
  /** Calls started per second. */
  rate: number;
  /** From SIPp's start to its exit. */
  wallMs: number;
  registered: number;
  failed: number;
  /** Per registered phone, first REGISTER -> 200 (ms). */
  responseMs: number[];
}

// The engine challenges the first REGISTER (401), the second carries the digest and gets 200.
const SCENARIO = `<?xml version="1.0" encoding="ISO-8859-1" ?>
<scenario name="register">
  <send retrans="500" start_rtd="register">
    <![CDATA[
REGISTER sip:[remote_ip]:[remote_port] SIP/2.0
Via: SIP/2.0/[transport] [local_ip]:[local_port];branch=[branch];rport
From: <sip:[field0]@[remote_ip]>;tag=[pid]SIPpTag[call_number]
To: <sip:[field0]@[remote_ip]>
Call-ID: [call_id]
CSeq: 1 REGISTER
Contact: <sip:[field0]@[local_ip]:[local_port]>
Max-Forwards: 70
Expires: 3600
Content-Length: 0

    ]]>
  </send>
  <recv response="401" auth="true" />
  <send retrans="500">
    <![CDATA[
REGISTER sip:[remote_ip]:[remote_port] SIP/2.0
Via: SIP/2.0/[transport] [local_ip]:[local_port];branch=[branch];rport
From: <sip:[field0]@[remote_ip]>;tag=[pid]SIPpTag[call_number]
To: <sip:[field0]@[remote_ip]>
Call-ID: [call_id]
CSeq: 2 REGISTER
Contact: <sip:[field0]@[local_ip]:[local_port]>
[field1]
Max-Forwards: 70
Expires: 3600
Content-Length: 0

    ]]>
  </send>
  <recv response="200" rtd="register" />
</scenario>
`;

/** Registers every phone once at `rate` per second against `registrar` (loopback). */
export async function registerPhones(options: {
  phones: readonly SippPhone[];
  registrar: { host: string; port: number };
  rate: number;
  /** Bound on the whole run; SIPp is killed by PID after it (and its calls count as failed). */
  timeoutS: number;
}): Promise<SippRegistrationRun> {
  const { phones, registrar, rate, timeoutS } = options;
  const dir = await mkdtemp(join(tmpdir(), "pbxctl-bench-sipp-"));
  try {
    await writeFile(join(dir, "register.xml"), SCENARIO);
    await writeFile(
      join(dir, "phones.csv"),
      `SEQUENTIAL\n${phones.map((p) => `${p.user};[authentication username=${p.user} password=${p.password}]`).join("\n")}\n`,
    );
    const localPort = await freeLoopbackPort(new Set([registrar.port]));
    const args = [
      `${registrar.host}:${registrar.port}`,
      ...["-sf", "register.xml", "-inf", "phones.csv"],
      ...["-i", "127.0.0.1", "-p", String(localPort)],
      ...["-m", String(phones.length), "-l", String(phones.length)],
      ...["-r", String(rate), "-rp", "1000"],
      ...["-trace_rtt", "-rtt_freq", "1"],
      // A phone whose answer never came fails after 10 s; the whole run ends at its bound.
      ...["-recv_timeout", "10000", "-timeout", `${timeoutS}s`, "-timeout_error"],
      // -nd: an aborted call ends there (no BYE for a REGISTER that failed).
      "-nostdin",
      "-nd",
    ];
    const started = performance.now();
    const child = spawn("sipp", args, { cwd: dir, stdio: ["ignore", "ignore", "pipe"] });
    let stderr = "";
    child.stderr.on("data", (chunk) => {
      stderr += String(chunk);
    });
    const killer = setTimeout(
      () => {
        if (child.pid) process.kill(child.pid, "SIGKILL");
      },
      (timeoutS + 10) * 1000,
    );
    const code = await new Promise<number | null>((resolve, reject) => {
      child.once("error", reject);
      child.once("exit", (exitCode) => resolve(exitCode));
    }).finally(() => clearTimeout(killer));
    const wallMs = performance.now() - started;
    // Exit 0: every call succeeded; 1: some failed; anything else: SIPp itself did not run.
    if (code !== 0 && code !== 1) throw new Error(`sipp exited ${code}: ${stderr.trim()}`);
    const rttFile = readdirSync(dir).find((name) => name.endsWith("_rtt.csv"));
    const responseMs = rttFile ? parseRtt(readFileSync(join(dir, rttFile), "utf8")) : [];
    return {
      phones: phones.length,
      rate,
      wallMs,
      registered: responseMs.length,
      failed: phones.length - responseMs.length,
      responseMs,
    };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** `-trace_rtt` lines are `<date_ms>;<response time ms>;<rtd name>` after a header line. */
function parseRtt(text: string): number[] {
  return text
    .split("\n")
    .map((line) => line.split(";"))
    .filter((cells) => cells.length >= 2 && /^[\d.]+$/.test(cells[1]!.trim()))
    .map((cells) => Number(cells[1]));
}
