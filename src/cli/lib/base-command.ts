// What every pbxctl command shares: --json, typed domain errors shown as one line on stderr
// (never a stack trace), diagnostics printing and exit codes from the one table.
import { Command, Errors } from "@oclif/core";
import { formatDiagnostic, type SourceDiagnostic } from "../../model/diagnostic.js";
import { OrgFileError } from "../../model/org-file-paths.js";
import { colourEnabled, painter } from "./colour.js";
import { ExitCode } from "./exit-codes.js";
import { nearestName } from "./nearest.js";
import { diskSources, sourceSnippet } from "./source-snippet.js";

/**
 * A problem the user can fix (bad input, unreadable path, refused compile): one line, exit 1
 * unless a command documents another code for it.
 */
export class CommandFailure extends Error {
  override readonly name = "CommandFailure";
  constructor(
    message: string,
    readonly exitCode: number = ExitCode.error,
  ) {
    super(message);
  }
}

export abstract class PbxCommand extends Command {
  static override enableJsonFlag = true;

  /**
   * Prints problems to stderr (not in --json mode): `file:line:col path: message`, then, on a
   * terminal, the source line with a caret under the column when the file can be read. Piped
   * (CI logs, grep, editors' problem matchers) a problem is its one line.
   */
  protected printDiagnostics(diagnostics: readonly SourceDiagnostic[]): void {
    if (this.jsonEnabled()) return;
    const paint = painter(colourEnabled(process.stderr));
    const sources: ReturnType<typeof diskSources> =
      process.stderr.isTTY === true ? diskSources() : () => undefined;
    for (const d of diagnostics) {
      const text = formatDiagnostic(d);
      this.logToStderr(paint(d.severity === "error" ? "red" : "yellow", text));
      const source = sources(d.file);
      if (source !== undefined) {
        for (const line of sourceSnippet(source, d.line, d.col, paint)) this.logToStderr(line);
      }
    }
  }

  /**
   * Ends the command with `code`: the result is printed as JSON first (oclif only prints a
   * returned value), then the process exits with the code. Code 0 simply returns.
   */
  protected finish<T>(result: T, code: number): T {
    if (code === ExitCode.ok) return result;
    if (this.jsonEnabled()) this.logJson(result);
    return this.exit(code) as never;
  }

  /**
   * An unknown flag gets "Did you mean --etc?" like an unknown command gets its nearest command
   * (oclif's parser names the flag and nothing more). The message is amended in place, so the
   * error keeps its exit code (2) and oclif's help hint.
   */
  private suggestFlags(err: Error & { flags?: unknown }): void {
    if (!/^Nonexistent flags?:/.test(err.message) || !Array.isArray(err.flags)) return;
    const known = Object.entries(this.ctor.flags ?? {}).flatMap(([name, flag]) =>
      (flag as { hidden?: boolean }).hidden ? [] : [name],
    );
    const hints = (err.flags as unknown[]).flatMap((typed) => {
      const bare = String(typed).replace(/^-+/, "").split("=")[0]!;
      const nearest = nearestName(bare, known);
      return nearest ? [`--${nearest} for ${String(typed)}`] : [];
    });
    if (hints.length === 0) return;
    // After the first line, before oclif's "See more help with --help".
    const [first, ...rest] = err.message.split("\n");
    err.message = [`${first}. Did you mean ${hints.join(", ")}?`, ...rest].join("\n");
  }

  /**
   * The --json form of a failure: `{"error": "<message>"}`, nothing else. oclif's default spreads
   * the error's own properties, which for a usage error is the parser's whole state (the command
   * definition, package.json): hundreds of lines no script can use.
   */
  override toErrorJson(err: unknown): { error: string } {
    return { error: err instanceof Error ? err.message : String(err) };
  }

  protected override async catch(err: Error & { exitCode?: number }): Promise<unknown> {
    if (err instanceof Errors.ExitError) throw err;
    this.suggestFlags(err);
    const expected = err instanceof OrgFileError || err instanceof CommandFailure;
    const exit = err instanceof CommandFailure ? err.exitCode : ExitCode.error;
    const shown = expected ? new Errors.CLIError(err.message, { exit }) : err;
    if (this.jsonEnabled()) {
      this.logJson(this.toErrorJson(shown));
      // The JSON is the whole answer: exit with the error's code, no second copy on stderr.
      const code = (shown as Partial<Errors.CLIError>).oclif?.exit;
      return this.exit(typeof code === "number" ? code : ExitCode.error);
    }
    throw shown;
  }
}
