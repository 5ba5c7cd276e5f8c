// View models handed to the templates. They carry only strings that are already safe for the
// place they land; the templates loop and print, nothing more.

export interface DialplanStep {
  /** The first step of an extension is written `exten => <exten>,1`, the others ` same => n`. */
  first: boolean;
  /** Priority label, e.g. `start` in `same => n(start),...`; empty for none. */
  label: string;
  /** Application call with its arguments, e.g. `Goto(org_x_ivr,5000,1)`. */
  app: string;
}

export interface DialplanExtension {
  exten: string;
  comments: string[];
  steps: DialplanStep[];
}

export interface DialplanContext {
  name: string;
  comments: string[];
  includes: string[];
  extensions: DialplanExtension[];
}

export interface DialplanView {
  header: string[];
  contexts: DialplanContext[];
}

export interface ConfigOption {
  key: string;
  value: string;
}

export interface ConfigSection {
  name: string;
  comments: string[];
  options: ConfigOption[];
}

/** pjsip.conf and queues.conf share this shape: sections of `key=value` lines. */
export interface SectionsView {
  header: string[];
  sections: ConfigSection[];
}

export interface IncludeView {
  header: string[];
  includes: string[];
}
