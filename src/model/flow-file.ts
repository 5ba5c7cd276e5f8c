// Flow assertion files (`flows/*.yaml` beside the org files): calls and where they must go,
// checked by `pbxctl test` and `pbxctl plan`. Parsed like org files, so every problem is
// reported at file:line:col.
import { type Static, Type } from "@sinclair/typebox";
import { Ajv, type ValidateFunction } from "ajv";
import type { Diagnostic } from "./diagnostic.js";
import { readableErrors } from "./schema-check.js";
import { parseYaml, positionOf, type SourceDiagnostic, type YamlSource, yamlData } from "./yaml.js";

const Destination = Type.String({
  pattern: "^(ivr|queue|user|phone|voicemail|callback) .+$|^hangup$",
  description:
    "a destination: ivr <name>, queue <name>, user <extension>, phone <number>, voicemail <mailbox>, callback <number> or hangup",
});

export const FlowSchema = Type.Object(
  {
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    call: Type.String({ pattern: "^\\+?[0-9]{3,20}$", description: "the DID called, in any form" }),
    press: Type.Array(Type.String({ pattern: "^[0-9*#]{0,15}$" }), {
      default: [],
      description: 'digits at each menu prompt, in order; "" lets the prompt time out',
    }),
    caller: Type.Optional(Type.String({ pattern: "^\\+?[0-9]{3,20}$" })),
    expect: Type.Array(Destination, {
      minItems: 1,
      description: "destinations the call enters when someone answers, in order",
    }),
    on_timeout: Type.Optional(
      Type.Array(Destination, {
        minItems: 1,
        description: "where the call goes on when nobody answers, after `expect`",
      }),
    ),
    outcome: Type.Optional(
      Type.String({ minLength: 1, description: "text the outcome must contain" }),
    ),
  },
  { additionalProperties: false },
);

export const FlowFileSchema = Type.Object(
  { flows: Type.Array(FlowSchema, { minItems: 1 }) },
  { additionalProperties: false },
);

export type Flow = Static<typeof FlowSchema>;

/** One flow of a file, with where it is written (for messages). */
export interface LocatedFlow {
  flow: Flow;
  file: string;
  line: number;
  col: number;
  /** `flows[<i>]`, the path of diagnostics about it. */
  path: string;
  /** Where a field of the flow (or an item: `expect[1]`) is written. */
  positionOf(field: string): { line: number; col: number };
}

let compiled: ValidateFunction | undefined;

function validator(): ValidateFunction {
  compiled ??= new Ajv({ useDefaults: true, allErrors: true, verbose: true }).compile(
    FlowFileSchema,
  );
  return compiled;
}

/** Parses one flow file: its flows, or the problems that keep it from being checked. */
export function loadFlowFile(
  file: string,
  text: string,
): { flows: LocatedFlow[]; diagnostics: SourceDiagnostic[] } {
  const { source, problems } = parseYaml(text, file);
  const diagnostics: SourceDiagnostic[] = problems.map((p) => ({ ...p, file, path: "" }));
  if (diagnostics.some((d) => d.severity === "error")) return { flows: [], diagnostics };
  const read = yamlData(source, FlowFileSchema);
  // An alias bomb and the like: one positioned sentence, like any other YAML problem.
  if ("problem" in read) return { flows: [], diagnostics: [{ ...read.problem, file, path: "" }] };
  const data = read.data as { flows: Flow[] } | null;
  const validate = validator();
  if (!validate(data)) {
    const errors = readableErrors(validate.errors ?? []);
    const diagnostics = errors
      .map((d) => placed(source, d, { key: d.at === "key" }))
      .sort((a, b) => a.line - b.line || a.col - b.col);
    return { flows: [], diagnostics };
  }
  const flows = data!.flows.map((flow, index) => {
    const path = `flows[${index}]`;
    return {
      flow,
      file,
      path,
      ...positionOf(source, path),
      positionOf: (field: string) => positionOf(source, `${path}.${field}`),
    };
  });
  return { flows, diagnostics };
}

function placed(source: YamlSource, d: Diagnostic, options: { key?: boolean } = {}) {
  return { ...d, file: source.file, ...positionOf(source, d.path, options) };
}
