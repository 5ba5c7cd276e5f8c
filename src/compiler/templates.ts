// The one Handlebars environment of the compiler. Templates are read once, when this module is
// first imported, and compiled with `strict` (a missing field is a bug, not an empty string) and
// `noEscape` (output is config text, not HTML; escaping happens in escape.ts, per destination).
import { readFileSync } from "node:fs";
import Handlebars from "handlebars";
import type { DialplanView, IncludeView, SectionsView } from "./views.js";

const handlebars = Handlebars.create();
// src/compiler and dist/compiler are both two levels below the package root.
const templateDir = new URL("../../templates/", import.meta.url);

function load<View>(name: string): (view: View) => string {
  const source = readFileSync(new URL(name, templateDir), "utf8");
  return handlebars.compile<View>(source, { strict: true, noEscape: true });
}

export const renderDialplan = load<DialplanView>("extensions.conf.hbs");
/** pjsip.conf and queues.conf: `[section]` then `key=value` lines. */
export const renderSections = load<SectionsView>("sections.conf.hbs");
export const renderIncludes = load<IncludeView>("include.conf.hbs");
