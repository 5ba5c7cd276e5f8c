// Colour for human output: only on a terminal, never with NO_COLOR (https://no-color.org) or in
// --json mode, so piped output and CI logs stay plain text.
import { styleText } from "node:util";

export type Style = "red" | "green" | "yellow" | "cyan" | "bold" | "dim";

export type Paint = (style: Style, text: string) => string;

/** Whether output to `stream` may carry colour under `env`. */
export function colourEnabled(
  stream: { isTTY?: boolean } = process.stdout,
  env: Readonly<Record<string, string | undefined>> = process.env,
): boolean {
  if (env.NO_COLOR !== undefined && env.NO_COLOR !== "") return false;
  if (env.FORCE_COLOR !== undefined && env.FORCE_COLOR !== "0") return true;
  return stream.isTTY === true;
}

/** A painter: styled text when `enabled`, the text unchanged otherwise. */
export function painter(enabled: boolean): Paint {
  return enabled ? (style, text) => styleText(style, text) : (_style, text) => text;
}
