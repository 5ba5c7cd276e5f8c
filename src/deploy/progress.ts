// Progress of a long operation: listr2 on a terminal, plain lines otherwise (CI logs), nothing in
// --json mode.
import { Listr } from "listr2";

export type ProgressMode = "tty" | "plain" | "silent";

export interface Step {
  title: string;
  /** Runs the step; `report` shows a progress line; the returned text replaces the title when done. */
  run: (report: (message: string) => void) => Promise<string | undefined>;
}

/** The mode for a command: silent for --json, listr2 on a TTY, plain lines otherwise. */
export function progressMode(
  json: boolean,
  stream: NodeJS.WriteStream = process.stderr,
): ProgressMode {
  if (json) return "silent";
  return stream.isTTY ? "tty" : "plain";
}

/** Runs the steps in order; the first error stops them and is rethrown. */
export async function runSteps(
  steps: readonly Step[],
  mode: ProgressMode,
  writeLine: (line: string) => void = (line) => process.stderr.write(`${line}\n`),
): Promise<void> {
  if (mode === "tty") {
    const list = new Listr(
      steps.map((step) => ({
        title: step.title,
        task: async (_ctx: unknown, task: { output: string; title: string }) => {
          const summary = await step.run((message) => {
            task.output = message;
          });
          if (summary) task.title = summary;
        },
      })),
      { concurrent: false, exitOnError: true, rendererOptions: { collapseErrors: false } },
    );
    await list.run();
    return;
  }
  for (const step of steps) {
    if (mode === "plain") writeLine(`${step.title}...`);
    const summary = await step.run(mode === "plain" ? (m) => writeLine(`  ${m}`) : () => {});
    if (mode === "plain") writeLine(summary ?? `${step.title}: done`);
  }
}
