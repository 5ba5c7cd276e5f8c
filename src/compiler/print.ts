// Prints view models as Asterisk config text: the one place where the file syntax is written.
// Printers only loop and concatenate; every value in a view is already safe for where it lands
// (escape.ts). These replaced Handlebars templates, which cost four times as much as the whole
// rest of a compile (bench:compile; see ARCHITECTURE.md "Why no template engine").
import type { DialplanView, IncludeView, SectionsView } from "./views.js";

function comments(lines: readonly string[]): string {
  let out = "";
  for (const line of lines) out += `; ${line}\n`;
  return out;
}

/** extensions.conf: `[context]`, `include =>`, `exten => x,1,App()` and ` same => n,App()`. */
export function printDialplan(view: DialplanView): string {
  let out = comments(view.header);
  for (const context of view.contexts) {
    out += `\n[${context.name}]\n${comments(context.comments)}`;
    for (const include of context.includes) out += `include => ${include}\n`;
    for (const extension of context.extensions) {
      out += comments(extension.comments);
      for (const step of extension.steps) {
        out += step.first ? `exten => ${extension.exten},1` : " same => n";
        out += step.label ? `(${step.label}),${step.app}\n` : `,${step.app}\n`;
      }
    }
  }
  return out;
}

/** pjsip.conf and queues.conf: `[section]` followed by `key=value` lines. */
export function printSections(view: SectionsView): string {
  let out = comments(view.header);
  for (const section of view.sections) {
    out += `\n[${section.name}]\n${comments(section.comments)}`;
    for (const option of section.options) out += `${option.key}=${option.value}\n`;
  }
  return out;
}

/** Top-level files: one `#include "<path>"` per org, listed explicitly. */
export function printIncludes(view: IncludeView): string {
  let out = comments(view.header);
  for (const include of view.includes) out += `#include "${include}"\n`;
  return out;
}
