// Reading a Prometheus text scrape back in tests: samples by name and labels, and promtool's
// opinion of it (Debian's `prometheus` package; CI installs it).
import { spawnSync } from "node:child_process";

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** Every sample line of a text exposition. */
export function parseScrape(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split("\n")) {
    if (line === "" || line.startsWith("#")) continue;
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match) throw new Error(`not a sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const pair of (match[2] ?? "").matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) {
      labels[pair[1]!] = pair[2]!;
    }
    samples.push({ name: match[1]!, labels, value: Number(match[3]) });
  }
  return samples;
}

/** A scrape's samples, summed over those whose labels include `labels`. */
export class Scrape {
  readonly samples: Sample[];

  constructor(readonly text: string) {
    this.samples = parseScrape(text);
  }

  /** The sum of the samples of `name` whose labels include `labels` (0 when there is none). */
  value(name: string, labels: Record<string, string> = {}): number {
    let sum = 0;
    for (const sample of this.samples) {
      if (sample.name !== name) continue;
      if (Object.entries(labels).every(([key, value]) => sample.labels[key] === value)) {
        sum += sample.value;
      }
    }
    return sum;
  }

  has(name: string): boolean {
    return this.samples.some((sample) => sample.name === name);
  }
}

/** `promtool check metrics` on `text`: null when it is accepted or promtool is absent, else why. */
export function promtoolProblems(text: string): { problems: string | null; ran: boolean } {
  const run = spawnSync("promtool", ["check", "metrics"], { input: text, encoding: "utf8" });
  if (run.error && (run.error as NodeJS.ErrnoException).code === "ENOENT") {
    return { problems: null, ran: false };
  }
  const output = `${run.stdout}${run.stderr}`.trim();
  return {
    problems: run.status === 0 && output === "" ? null : output || `exit ${run.status}`,
    ran: true,
  };
}
