// The YAML face of the model: parse an org file keeping source positions, so that every problem
// found later (schema, references) can be reported at the line and column of its node.
import {
  type Document,
  isMap,
  isPair,
  isScalar,
  isSeq,
  LineCounter,
  type Node,
  parseDocument,
  visit,
} from "yaml";
import type { SourcePosition } from "./diagnostic.js";
import { type PathSegment, parsePath } from "./diagnostic-path.js";

export { formatDiagnostic, type SourceDiagnostic, type SourcePosition } from "./diagnostic.js";

/** One parsed YAML file: the document with positions, and what it says as plain data. */
export interface YamlSource {
  file: string;
  doc: Document.Parsed;
  lineCounter: LineCounter;
}

/** A syntax problem of the YAML itself, already placed in the file. */
export interface YamlSyntaxProblem extends SourcePosition {
  severity: "error" | "warning";
  message: string;
}

/** Parses YAML text; syntax errors (and warnings) come back positioned, never thrown. */
export function parseYaml(
  text: string,
  file: string,
): { source: YamlSource; problems: YamlSyntaxProblem[] } {
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, prettyErrors: false, keepSourceTokens: false });
  const source = { file, doc, lineCounter };
  const problems: YamlSyntaxProblem[] = [
    ...doc.errors.map((e) => ({ severity: "error" as const, error: e })),
    ...doc.warnings.map((e) => ({ severity: "warning" as const, error: e })),
  ].map(({ severity, error }) => ({
    severity,
    message: error.message,
    ...lineCounter.linePos(error.pos[0]),
  }));
  return { source, problems };
}

type SchemaLike = {
  type?: string;
  anyOf?: SchemaLike[];
  properties?: Record<string, SchemaLike>;
  items?: SchemaLike;
};

/**
 * The document as plain data. Where the schema expects a string, a plain scalar that YAML read
 * as a number keeps its source text: `extension: 1001` is "1001", and `number: +918065978001` or
 * `digit: 0` do not lose their `+` or leading zero.
 */
export function yamlData(
  source: YamlSource,
  schema: object,
): { data: unknown } | { problem: YamlSyntaxProblem } {
  keepNumbersAsText(source.doc.contents, schema as SchemaLike);
  try {
    return { data: source.doc.toJS({ maxAliasCount: MAX_ALIAS_COUNT }) };
  } catch (error) {
    // The yaml library throws (a ReferenceError) on an alias bomb: aliases of aliases that would
    // expand a small file into millions of nodes. Say so at the first alias, in words.
    let alias: Node | undefined;
    visit(source.doc, {
      Alias(_key, node) {
        alias = node;
        return visit.BREAK;
      },
    });
    const message = alias
      ? `aliases (*name) expand to too many nodes (more than ${MAX_ALIAS_COUNT} per anchor); ` +
        "write the repeated values out instead of nesting aliases"
      : `the file cannot be read as data: ${(error as Error).message}`;
    return {
      problem: {
        severity: "error",
        message,
        ...source.lineCounter.linePos(rangeStart(alias) ?? 0),
      },
    };
  }
}

/** How often one anchor may be expanded; far above what an org file needs. */
const MAX_ALIAS_COUNT = 100;

function keepNumbersAsText(node: unknown, schema: SchemaLike | undefined): void {
  if (!schema) return;
  if (isScalar(node)) {
    if (typeof node.value === "number" && node.source !== undefined && expectsString(schema)) {
      node.value = node.source;
    }
  } else if (isMap(node)) {
    const properties = schema.properties ?? objectBranch(schema)?.properties;
    for (const pair of node.items) {
      const key = isScalar(pair.key) ? String(pair.key.value) : undefined;
      if (key !== undefined && properties && Object.hasOwn(properties, key)) {
        keepNumbersAsText(pair.value, properties[key]);
      }
    }
  } else if (isSeq(node)) {
    const items = schema.items ?? objectBranch(schema)?.items;
    for (const item of node.items) keepNumbersAsText(item, items);
  }
}

function expectsString(schema: SchemaLike): boolean {
  if (schema.type === "string") return true;
  const branches = schema.anyOf ?? [];
  return (
    branches.some((b) => b.type === "string") &&
    !branches.some((b) => b.type === "integer" || b.type === "number")
  );
}

function objectBranch(schema: SchemaLike): SchemaLike | undefined {
  return schema.anyOf?.find((b) => b.type === "object" || b.type === "array");
}

/**
 * Where the node at `path` starts. A path that does not exist in the file (a field left out, a
 * default filled in) is placed at its nearest existing ancestor. With `key`, a mapping entry is
 * placed at its key rather than its value (for "unknown field").
 */
export function positionOf(
  source: YamlSource,
  path: string | readonly PathSegment[],
  options: { key?: boolean } = {},
): SourcePosition {
  const segments = typeof path === "string" ? parsePath(path) : path;
  let node: unknown = source.doc.contents;
  let best = rangeStart(node) ?? 0;
  for (const [index, segment] of segments.entries()) {
    const last = index === segments.length - 1;
    let next: unknown;
    if (isMap(node)) {
      const pair = node.items.find((p) => isPair(p) && isScalar(p.key) && p.key.value === segment);
      if (!pair) break;
      if (last && options.key) next = pair.key;
      else next = rangeStart(pair.value) === undefined ? pair.key : pair.value;
    } else if (isSeq(node) && typeof segment === "number") {
      next = node.items[segment];
    }
    const start = rangeStart(next);
    if (start === undefined) break;
    best = start;
    node = next;
  }
  return source.lineCounter.linePos(best);
}

function rangeStart(node: unknown): number | undefined {
  const range = (node as Node | null | undefined)?.range;
  return range ? range[0] : undefined;
}
