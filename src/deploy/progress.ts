// Progress of a long operation: a listr2 progress line on a terminal; nothing in --json mode or
// when stderr is piped (a CI log or a script gets the command's output and nothing else), unless
// PBX_PROGRESS=plain asks for one line per step there. listr2 (and its dependencies) is loaded
// only to draw on a terminal: a pipeline's `validate` or `plan` never pays for it.

export type ProgressMode = "tty" | "plain" | "silent";

export interface Step {
  title: string;
  /** Runs the step; `report` shows a progress line; the returned text replaces the title when done. */
  run: (report: (message: string) => void) => Promise<string | undefined>;
}

/** The mode for a command: silent for --json, listr2 on a TTY, silent (or plain) otherwise. */
export function progressMode(
  json: boolean,
  stream: { isTTY?: boolean } = process.stderr,
  env: Readonly<Record<string, string | undefined>> = process.env,
): ProgressMode {
  if (json) return "silent";
  if (stream.isTTY) return "tty";
  return env.PBX_PROGRESS === "plain" ? "plain" : "silent";
}

/** Runs the steps in order; the first error stops them and is rethrown. */
export async function runSteps(
  steps: readonly Step[],
  mode: ProgressMode,
  writeLine: (line: string) => void = (line) => process.stderr.write(`${line}\n`),
): Promise<void> {
  if (mode === "tty") {
    const { Listr, ListrLogger, ProcessOutput } = await import("listr2");
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
      {
        concurrent: false,
        exitOnError: true,
        rendererOptions: {
          collapseErrors: false,
          // Progress is not output: stdout keeps only the command's result.
          logger: new ListrLogger({
            processOutput: new ProcessOutput(process.stderr, process.stderr),
          }),
        },
      },
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
