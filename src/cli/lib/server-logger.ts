// The logger of a long-running command (`serve`, `intake serve`): pino's JSON lines, or with
// --pretty coloured lines on stderr. `pino` is passed in because `serve` takes it from its one
// bundled start-up module (src/api/serve-modules.ts) and must not load it a second time.
import type { Logger, pino as pinoFunction } from "pino";
import { colourEnabled } from "./colour.js";

export async function serverLogger(
  pino: typeof pinoFunction,
  options: { pretty: boolean; level: string },
): Promise<Logger> {
  if (!options.pretty) return pino({ level: options.level });
  // Loaded only for --pretty: every other start would pay for loading it.
  const prettyStream = (await import("pino-pretty")).default;
  return pino(
    { level: options.level },
    prettyStream({ colorize: colourEnabled(process.stderr), destination: 2 }),
  );
}
