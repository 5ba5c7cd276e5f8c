// Answers a real Asterisk 22 gave to every command pbxctl sends over AMI, recorded by the engine
// suite (test/engine/ami-target.test.ts, UPDATE_GOLDEN=1 rewrites the file) and replayed by the
// fake AMI server of the fast suite, so a test cannot pass with a command Asterisk would refuse
// or an answer it would not give. `{name}` stands for the object a command names; `{n}` for a
// number that changes from run to run.
import { readFileSync } from "node:fs";

export const TRANSCRIPT_FILE = new URL("../../../fixtures/ami/asterisk-22.json", import.meta.url)
  .pathname;

export interface TranscriptAnswer {
  /** The command, with `{name}` where it names an object. */
  command: string;
  /**
   * Which answer this is: `ok`, `found context`, `missing extension`, `blacklisted`, `unknown`,
   * `loaded`, ... (the fake picks the case that fits its state).
   */
  case: string;
  response: string;
  message: string;
  output: string[];
}

export interface AmiTranscript {
  /** `Asterisk 22.10.1`: the engine that gave these answers. */
  engine: string;
  answers: TranscriptAnswer[];
}

/** A real answer as a template: the named object becomes `{name}`, counters `{n}`. */
export function templateOf(answer: {
  command: string;
  name?: string | undefined;
  case: string;
  response: string;
  message: string;
  output: string[];
}): TranscriptAnswer {
  const name = answer.name;
  const swap = (text: string) => (name ? text.split(name).join("{name}") : text);
  const volatile = answer.command === "core show uptime";
  return {
    command: swap(answer.command),
    case: answer.case,
    response: answer.response,
    message: name ? answer.message.split(name).join("{name}") : answer.message,
    output: answer.output.map((line) => {
      const named = swap(line);
      return volatile ? named.replace(/:\s.*$/, ": {n}") : named;
    }),
  };
}

/**
 * Answers of the call-control actions (Originate, BlindTransfer, Hangup, and hold's Getvar,
 * Setvar, Redirect and Bridge; `{channel}` stands for the channel named), captured from a real
 * Asterisk 22 by test/engine/call-control.test.ts (UPDATE_GOLDEN=1 rewrites it). Kept apart from
 * the deployer's transcript: each suite rewrites only its own file.
 */
export const CALL_CONTROL_FILE = new URL("../../../fixtures/ami/call-control.json", import.meta.url)
  .pathname;

/** One action's real answer: `action` is the AMI action, `case` which situation it answers. */
export interface ActionAnswer {
  action: string;
  case: string;
  response: string;
  message: string;
}

let cachedActions: ActionAnswer[] | null = null;

/** The engine's answer to `action` in situation `which`, or null when none was recorded. */
export function recordedActionAnswer(action: string, which: string): ActionAnswer | null {
  cachedActions ??= [
    ...(JSON.parse(readFileSync(CALL_CONTROL_FILE, "utf8")).answers as ActionAnswer[]),
    ...recordedPjsipRealtime().actions,
  ];
  return (
    cachedActions.find(
      (a) => a.action.toLowerCase() === action.toLowerCase() && a.case === which,
    ) ?? null
  );
}

/**
 * Answers of what realtime PJSIP sends (issue 24): `SorceryMemoryCacheExpireObject` in each case
 * and the two module reloads realtime mode uses instead of `module reload res_pjsip.so`, captured
 * from a real Asterisk 22 running `engine init --pjsip realtime` by test/engine/realtime.test.ts
 * (UPDATE_GOLDEN=1 rewrites it). Its own file: the deployer's transcript comes from an engine
 * without the realtime modules.
 */
export const PJSIP_REALTIME_FILE = new URL(
  "../../../fixtures/ami/pjsip-realtime.json",
  import.meta.url,
).pathname;

export interface PjsipRealtimeTranscript {
  engine: string;
  actions: ActionAnswer[];
  commands: TranscriptAnswer[];
}

let cachedRealtime: PjsipRealtimeTranscript | null = null;

/** The realtime PJSIP answers (read once). */
export function recordedPjsipRealtime(): PjsipRealtimeTranscript {
  cachedRealtime ??= JSON.parse(
    readFileSync(PJSIP_REALTIME_FILE, "utf8"),
  ) as PjsipRealtimeTranscript;
  return cachedRealtime;
}

let cached: AmiTranscript | null = null;

/** The recorded transcript (read once). */
export function recordedTranscript(): AmiTranscript {
  cached ??= JSON.parse(readFileSync(TRANSCRIPT_FILE, "utf8")) as AmiTranscript;
  return cached;
}

function pattern(template: string): RegExp {
  const escaped = template.replace(/[.*+?^${}()|[\]\\]/g, "\\$&").replace("\\{name\\}", "(.+)");
  return new RegExp(`^${escaped}$`);
}

/** The recorded answers for `command` (one per case), with the name it carries. */
export function answersFor(
  command: string,
): { name: string | null; answers: TranscriptAnswer[] } | null {
  const answers: TranscriptAnswer[] = [];
  let name: string | null = null;
  for (const answer of [
    ...recordedTranscript().answers,
    ...recordedPjsipRealtime().commands,
    ...recordedSession().commands,
  ]) {
    const match = pattern(answer.command).exec(command);
    if (!match) continue;
    answers.push(answer);
    name = match[1] ?? null;
  }
  return answers.length > 0 ? { name, answers } : null;
}

/** An answer's output with its placeholders filled in. */
export function fillOutput(answer: TranscriptAnswer, name: string | null): string[] {
  return answer.output.map((line) => fill(line, name));
}

/** A template string with its placeholders filled in. */
export function fill(text: string, name: string | null): string {
  return text
    .split("{name}")
    .join(name ?? "")
    .replace(/\{n\}/g, "0");
}

/**
 * The AMI session itself (banner, Login, Logoff, Ping, refusals, the empty lists pbxctl asks for,
 * and what a reload answers while another runs), captured from a real Asterisk 22 by
 * test/engine/ami-session.test.ts (UPDATE_GOLDEN=1, or `npm run record:ami`, rewrites it).
 */
export const SESSION_FILE = new URL("../../../fixtures/ami/session.json", import.meta.url).pathname;

/**
 * One action's real answer: every message Asterisk sent with its ActionID (response first, then
 * any events of a list), headers in the order sent, ActionID left out; `{name}` stands for the
 * action named, `{n}` for a value that changes from run to run. `closes`: Asterisk hung up after.
 */
export interface SessionAnswer {
  action: string;
  case: string;
  messages: Record<string, string>[];
  closes: boolean;
}

export interface AmiSessionTranscript {
  engine: string;
  /** The first line Asterisk sends on a new connection. */
  banner: string;
  answers: SessionAnswer[];
  /** `Command` answers beside the deployer's transcript: reloads while another one runs. */
  commands: TranscriptAnswer[];
}

// Values that differ at every run: the engine's clock.
const VOLATILE_HEADERS = new Set(["Timestamp"]);

/** A recorded exchange as a template (ActionID dropped, the action's name and clocks abstracted). */
export function sessionTemplateOf(recorded: {
  action: string;
  case: string;
  messages: Array<Array<[string, string]>>;
  closes: boolean;
  name?: string | undefined;
}): SessionAnswer {
  const swap = (text: string) => (recorded.name ? text.split(recorded.name).join("{name}") : text);
  return {
    action: swap(recorded.action),
    case: recorded.case,
    messages: recorded.messages.map((message) =>
      Object.fromEntries(
        message
          .filter(([key]) => key !== "ActionID")
          .map(([key, value]) => [key, VOLATILE_HEADERS.has(key) ? "{n}" : swap(value)]),
      ),
    ),
    closes: recorded.closes,
  };
}

let cachedSession: AmiSessionTranscript | null = null;

/** The recorded session answers (read once). */
export function recordedSession(): AmiSessionTranscript {
  cachedSession ??= JSON.parse(readFileSync(SESSION_FILE, "utf8")) as AmiSessionTranscript;
  return cachedSession;
}

/** The recorded session answer to `action` (any case of letters) in situation `which`. */
export function sessionAnswer(action: string, which: string): SessionAnswer | null {
  return (
    recordedSession().answers.find(
      (a) => a.action.toLowerCase() === action.toLowerCase() && a.case === which,
    ) ?? null
  );
}
