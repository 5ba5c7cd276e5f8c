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
  Scalar,
  visit,
  YAMLMap,
  YAMLSeq,
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

/** The parts of a JSON Schema that say what a YAML value should be read as. */
export type SchemaLike = {
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
  // Nearly every file is plain mappings, lists and scalars: read in one walk. Anything else
  // (aliases, tags, merge keys, keys that are not plain values) takes the yaml package's own
  // conversion, which the one walk gives the same answer as wherever it answers at all.
  const plain = plainData(source.doc.contents, schema as SchemaLike);
  return plain === NOT_PLAIN ? convertedData(source, schema) : { data: plain };
}

/**
 * `yamlData` by the yaml package's own conversion (`toJS`), once `keepNumbersAsText` has
 * written the numbers' text into the document: any file, aliases and tags included.
 */
export function convertedData(
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

/** What `plainData` answers for a tree it leaves to the yaml package's conversion. */
const NOT_PLAIN: unique symbol = Symbol("not plain");

/**
 * `doc.toJS()` after `keepNumbersAsText`, in one walk that neither builds the conversion's
 * context nor writes into the document: a cold `validate` converts every file, and in each
 * thread's first 500 files this walk costs about 60% of the two (docs/gitops.md, issue 30 part
 * g). Answers NOT_PLAIN, at once, for what the yaml package's conversion does more with: an
 * alias or an anchor (aliases resolve to what the anchor became), a tag, a merge key (`<<`,
 * YAML 1.1), a key that is not a string, number, boolean or null, a pair inside a list
 * (`[a: 1]`), or a node of another class.
 */
function plainData(node: unknown, schema: SchemaLike | undefined): unknown {
  if (node === null || node === undefined) return node === null ? null : NOT_PLAIN;
  if (node instanceof Scalar) {
    if (node.tag !== undefined || node.anchor !== undefined) return NOT_PLAIN;
    const value = node.value;
    // What keepNumbersAsText writes into the node, read without writing it.
    if (typeof value === "number" && node.source !== undefined && schema && expectsString(schema)) {
      return node.source;
    }
    return value;
  }
  if (node instanceof YAMLMap) {
    if (node.constructor !== YAMLMap || node.tag !== undefined || node.anchor !== undefined) {
      return NOT_PLAIN;
    }
    const properties = schema && (schema.properties ?? objectBranch(schema)?.properties);
    const map: Record<string, unknown> = {};
    for (const pair of node.items) {
      const key = pair.key;
      if (!(key instanceof Scalar) || key.tag !== undefined || key.anchor !== undefined) {
        return NOT_PLAIN;
      }
      const keyValue = key.value;
      if (keyValue !== null && !PLAIN_KEY_TYPES.has(typeof keyValue)) return NOT_PLAIN;
      if (keyValue === "<<") return NOT_PLAIN;
      const keyText = String(keyValue);
      const inner =
        properties && Object.hasOwn(properties, keyText) ? properties[keyText] : undefined;
      const value = plainData(pair.value, inner);
      if (value === NOT_PLAIN) return NOT_PLAIN;
      // As the yaml package keys a plain object: null is "".
      setDataKey(map, keyValue === null ? "" : keyText, value);
    }
    return map;
  }
  if (node instanceof YAMLSeq) {
    if (node.constructor !== YAMLSeq || node.tag !== undefined || node.anchor !== undefined) {
      return NOT_PLAIN;
    }
    const items = schema && (schema.items ?? objectBranch(schema)?.items);
    const list: unknown[] = [];
    for (const item of node.items) {
      const value = plainData(item, items);
      if (value === NOT_PLAIN) return NOT_PLAIN;
      list.push(value);
    }
    return list;
  }
  return NOT_PLAIN;
}

/**
 * Sets `name` as the yaml package keys a plain object: a key already there (a duplicate, or one
 * Object.prototype has, such as __proto__) is defined rather than assigned.
 */
export function setDataKey(map: Record<string, unknown>, name: string, value: unknown): void {
  if (name in map) {
    Object.defineProperty(map, name, {
      value,
      writable: true,
      enumerable: true,
      configurable: true,
    });
  } else map[name] = value;
}

const PLAIN_KEY_TYPES = new Set(["string", "number", "boolean"]);

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

/** Whether a value under `schema` is text (a string, or a choice of string and non-numbers). */
export function expectsString(schema: SchemaLike): boolean {
  if (schema.type === "string") return true;
  const branches = schema.anyOf ?? [];
  return (
    branches.some((b) => b.type === "string") &&
    !branches.some((b) => b.type === "integer" || b.type === "number")
  );
}

/** The mapping or list choice of an `anyOf` schema, whose properties or items a walk follows. */
export function objectBranch(schema: SchemaLike): SchemaLike | undefined {
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
