// Colour for human output: only on a terminal, never with NO_COLOR (https://no-color.org) or in
// --json mode, so piped output and CI logs stay plain text.
import { inspect } from "node:util";

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

/**
 * A painter: styled text when `enabled`, the text unchanged otherwise. (node:util's styleText
 * decides by itself whether stdout is a terminal; here the caller has decided, per stream.)
 */
export function painter(enabled: boolean): Paint {
  if (!enabled) return (_style, text) => text;
  return (style, text) => {
    const [open, close] = inspect.colors[style] ?? [0, 0];
    return `\u001b[${open}m${text}\u001b[${close}m`;
  };
}
