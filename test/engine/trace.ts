// Reading a call trace: the `Executing [exten@context:priority] App("channel", "args")` lines
// Asterisk logs at verbose 3, in order.
import type { AsteriskInstance } from "../../src/engine/testing/asterisk-instance.js";

export interface Step {
  exten: string;
  context: string;
  priority: number;
  app: string;
  channel: string;
  args: string;
}

const EXECUTING = /Executing \[(.+?)@(.+?):(\d+)\] (\w+)\("([^"]*)", "(.*)"\) in new stack/;

/** The steps executed in the log text, in order. */
export function steps(log: string): Step[] {
  const found: Step[] = [];
  for (const line of log.split("\n")) {
    const match = EXECUTING.exec(line);
    if (!match) continue;
    found.push({
      exten: match[1]!,
      context: match[2]!,
      priority: Number(match[3]),
      app: SPELLING[match[4]!] ?? match[4]!,
      channel: match[5]!,
      args: match[6]!,
    });
  }
  return found;
}

/**
 * Application names as the dialplan file spells them: Asterisk logs the registered name
 * (`BackGround`), the files use the documented one (`Background`).
 */
const SPELLING: Record<string, string> = { BackGround: "Background" };

/** `App(args)` of each step, for readable assertions. */
export function calls(list: readonly Step[]): string[] {
  return list.map((step) => `${step.app}(${step.args})`);
}

/** Resolves once the engine has no channel left, so the next trace is one call's alone. */
export async function channelsIdle(engine: AsteriskInstance, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const count = await engine.cli("core show channels count");
    if (/^0 active channels/m.test(count)) return;
    if (Date.now() > deadline)
      throw new Error(`channels still up after ${timeoutMs} ms:\n${count}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/**
 * Originates a Local channel into `exten@context` whose other half runs `peer` (an
 * `exten@context` of the test dialplan, e.g. one that sends DTMF), then waits until the log
 * shows `until`, and returns the steps the call executed.
 */
export async function traceCall(
  engine: AsteriskInstance,
  target: string,
  peer: string,
  until: RegExp,
  timeoutMs = 20_000,
): Promise<Step[]> {
  await channelsIdle(engine);
  const since = engine.log().length;
  await engine.cli(`channel originate Local/${target} extension ${peer}`);
  const text = await engine.waitForLog(until, { since, timeoutMs });
  return steps(text);
}
