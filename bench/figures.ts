// What the throughput benches (bench:api, bench:calls, bench:webhooks, bench:compile) share:
// their numeric options, medians of repeated runs, and the machine's load beside each figure
// (the machine is shared; a figure without its load cannot be read).
import { loadavg } from "node:os";

/** `--name N` from the command line, else `fallback`. */
export function numberOption(name: string, fallback: number): number {
  const at = process.argv.indexOf(`--${name}`);
  return at > 0 ? Number(process.argv[at + 1]) : fallback;
}

/** `--runs N` (default 5): how many times each bench repeats its measurement for the medians. */
export const runsOption = (fallback = 5) => numberOption("runs", fallback);

export const median = (xs: readonly number[]) =>
  [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/** The 1-minute load average, for printing beside a figure: "load 1.3". */
export const load = () => `load ${loadavg()[0]!.toFixed(1)}`;
