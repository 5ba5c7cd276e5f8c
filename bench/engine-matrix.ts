// The bench:engine report: per size, one table with a column per PJSIP mode, so the two modes
// are read side by side; then the optional dialplan-edit and burst figures.
import type { SizeResult } from "./engine.js";
import { REALTIME_STEPS } from "./new-user-live.js";
import type { SippRegistrationRun } from "./sipp-registrations.js";

/** Each step of realtime PJSIP's path after a save, as the table names it. */
const STEP_LABELS: Record<(typeof REALTIME_STEPS)[number], string> = {
  sync: "sync started (save committed)",
  compiled: "org's PJSIP loaded, compiled",
  read: "current rows read (locked)",
  committed: "rows committed",
  expired: "cache expiries sent",
  verified: "endpoints verified",
};

const percentile = (xs: readonly number[], p: number) => {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.max(0, Math.ceil((p / 100) * sorted.length) - 1)]!;
};
const ms = (x: number) =>
  x >= 10_000 ? `${(x / 1000).toFixed(1)} s` : `${Math.round(x).toLocaleString("en")} ms`;
const p50p95 = (xs: readonly number[]) =>
  xs.length === 0 ? "-" : `${ms(percentile(xs, 50))} / ${ms(percentile(xs, 95))} (n=${xs.length})`;
/** A figure, or "did not finish" when its phase ran past its bound (the last row names it). */
const unfinished = (x: number | null, format: (x: number) => string) =>
  x === null ? "did not finish" : format(x);
/** `2x dialplan reload, 1x module reload res_pjsip.so`, in the order first sent. */
const reloadCounts = (commands: readonly string[]) => {
  const counts = new Map<string, number>();
  for (const command of commands) counts.set(command, (counts.get(command) ?? 0) + 1);
  return [...counts].map(([command, n]) => `${n}x ${command}`).join(", ") || "none";
};
const present = (xs: readonly (number | null)[]) => xs.filter((x): x is number => x !== null);

function registrations(run: SippRegistrationRun | null): string[] {
  if (!run) return ["-", "-"];
  // SIPp records response times in whole milliseconds.
  const fmt = (x: number) => (x < 1 ? "<1 ms" : ms(x));
  return [
    `${run.registered}/${run.phones} in ${ms(run.wallMs)}, ${run.failed} failed`,
    run.responseMs.length === 0
      ? "-"
      : `${fmt(percentile(run.responseMs, 50))} / ${fmt(percentile(run.responseMs, 95))}`,
  ];
}

/** One size's table, a column per PJSIP mode, printed as soon as the size is measured. */
export function printSizeTable(columns: readonly SizeResult[]): void {
  const orgs = columns[0]!.orgs;
  const rate = (pick: (r: SizeResult) => SippRegistrationRun | null) =>
    pick(columns.find((r) => pick(r)) ?? columns[0]!)?.rate ?? 0;
  const rows: string[][] = [
    [`${orgs} orgs`, ...columns.map((r) => r.mode)],
    [
      "load average (1 min), start -> end",
      ...columns.map((r) => `${r.loadBefore.toFixed(1)} -> ${r.loadAfter.toFixed(1)}`),
    ],
    [
      "start-up deploy (every org written, loaded)",
      ...columns.map((r) => unfinished(r.startupMs, ms)),
    ],
    ["  reloads it sent", ...columns.map((r) => reloadCounts(r.startupReloads))],
    ["engine restart: boot to fully booted", ...columns.map((r) => unfinished(r.bootMs, ms))],
    ["engine RSS after that boot", ...columns.map((r) => unfinished(r.rssMb, (x) => `${x} MB`))],
    [
      "new user registrable after API answer, p50 / p95",
      ...columns.map((r) => p50p95(r.newUsers.map((u) => u.registrableMs))),
    ],
    ...REALTIME_STEPS.map((step) => [
      `  realtime: ${STEP_LABELS[step]}, p50 / p95`,
      ...columns.map((r) => p50p95(present(r.newUsers.map((u) => u.steps[step] ?? null)))),
    ]),
    [
      "  event-loop delay meanwhile, p50 / p99 / max",
      ...columns.map((r) => {
        const d = r.eventLoopDelayMs;
        return d ? `${ms(d.p50)} / ${ms(d.p99)} / ${ms(d.max)}` : "-";
      }),
    ],
    [
      "new user callable (INVITE reaches it), p50 / p95",
      ...columns.map((r) => p50p95(present(r.newUsers.map((u) => u.callableMs)))),
    ],
    [
      `phones at ${rate((r) => r.steady)}/s: registered, wall time`,
      ...columns.map((r) => registrations(r.steady)[0]!),
    ],
    ["  REGISTER exchange p50 / p95", ...columns.map((r) => registrations(r.steady)[1]!)],
    [
      `after restart at ${rate((r) => r.storm)}/s: registered, wall`,
      ...columns.map((r) => registrations(r.storm)[0]!),
    ],
    ["  REGISTER exchange p50 / p95", ...columns.map((r) => registrations(r.storm)[1]!)],
  ];
  if (columns.some((r) => r.timedOut.length > 0)) {
    rows.push(["timed out / gave up", ...columns.map((r) => r.timedOut.join("; ") || "-")]);
  }
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((row) => row[c]!.length)));
  console.log(`\n${columns[0]!.engine}, PJSIP modes side by side`);
  for (const row of rows) {
    console.log(
      row
        .map((cell, c) => (c === 0 ? cell.padEnd(widths[c]!) : cell.padStart(widths[c]!)))
        .join("   "),
    );
  }
}

/** What the table's figures measure, then the optional IVR edit and burst figures. */
export function printEngineNotes(
  results: readonly SizeResult[],
  options: { dialplanEdits: number; burst: number },
): void {
  console.log(
    "\nregistrable: a phone's REGISTER (digest, password from the API answer) gets 200, retried" +
      " every 10 ms;\ncallable: an Originate of Local/<ext>@<prefix>internal (every 50 ms) reaches" +
      " the phone as an INVITE;\nREGISTER exchange: SIPp, first REGISTER to the 200 after the challenge" +
      " (two round trips, UDP retransmits at 500 ms;\nSIPp counts whole ms)",
  );

  if (options.dialplanEdits > 0) {
    console.log(
      "\nIVR timeout edit (dialplan reload): API answer -> `dialplan show` has it, p50 / p95",
    );
    for (const r of results) {
      console.log(
        `  ${String(r.orgs).padStart(4)} orgs, ${r.mode.padEnd(8)}: ${p50p95(r.dialplan)}`,
      );
    }
  }
  if (options.burst > 0) {
    console.log(
      `\nburst of ${options.burst} edits to one IVR, back to back [target: 1 dialplan reload]`,
    );
    for (const r of results) {
      const list = reloadCounts(r.burst.reloads);
      console.log(
        `  ${String(r.orgs).padStart(4)} orgs, ${r.mode.padEnd(8)}: ${r.burst.reloads.length} reload(s) (${list}); ` +
          `visible ${ms(r.burst.lastToVisibleMs)} after the last edit's answer, ` +
          `${ms(r.burst.firstToVisibleMs)} after the first`,
      );
    }
  }
}
