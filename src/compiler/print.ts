// Prints view models as Asterisk config text: the one place where the file syntax is written.
// Printers only loop and collect pieces; every value in a view is already safe for where it lands
// (escape.ts). These replaced Handlebars templates, which cost four times as much as the whole
// rest of a compile (bench:compile; see ARCHITECTURE.md "Why no template engine").
//
// Pieces are joined once at the end rather than appended with `+=`: appending builds a rope that
// V8 must flatten before the text can be encoded and written, and that flattening cost more than
// the printing itself (bench:compile).
import type { DialplanView, IncludeView, SectionsView } from "./views.js";

function pushComments(out: string[], lines: readonly string[]): void {
  for (const line of lines) out.push(`; ${line}\n`);
}

/** extensions.conf: `[context]`, `include =>`, `exten => x,1,App()` and ` same => n,App()`. */
export function printDialplan(view: DialplanView): string {
  const out: string[] = [];
  pushComments(out, view.header);
  for (const context of view.contexts) {
    out.push("\n[", context.name, "]\n");
    pushComments(out, context.comments);
    for (const include of context.includes) out.push("include => ", include, "\n");
    for (const extension of context.extensions) {
      pushComments(out, extension.comments);
      for (const step of extension.steps) {
        const head = step.first ? `exten => ${extension.exten},1` : " same => n";
        out.push(step.label ? `${head}(${step.label}),${step.app}\n` : `${head},${step.app}\n`);
      }
    }
  }
  return out.join("");
}

/** pjsip.conf and queues.conf: `[section]` followed by `key=value` lines. */
export function printSections(view: SectionsView): string {
  const out: string[] = [];
  pushComments(out, view.header);
  for (const section of view.sections) {
    out.push("\n[", section.name, "]\n");
    pushComments(out, section.comments);
    for (const option of section.options) out.push(`${option.key}=${option.value}\n`);
  }
  return out.join("");
}

/** Top-level files: one `#include "<path>"` per org, listed explicitly. */
export function printIncludes(view: IncludeView): string {
  const out: string[] = [];
  pushComments(out, view.header);
  for (const include of view.includes) out.push('#include "', include, '"\n');
  return out.join("");
}
