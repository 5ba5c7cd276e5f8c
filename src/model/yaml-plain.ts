// Reading an org file's data straight from the yaml package's parser tokens (its CST), without
// the document it would compose. Composing the document (a node, a range and a pair per value)
// is about a fifth of `parseDocument`, and a cold `validate` does it for every file only to read
// the values and, for a few paths, where they start (docs/gitops.md, issue 30 part i). Nearly
// every org file is plain YAML: block mappings and lists, one-line flow mappings and lists,
// plain, quoted and block scalars, comments. Such a file is read here; anything else (anchors,
// aliases, tags, `---`, explicit keys `?`, empty values, tabs between tokens, keys that are not
// strings, flow collections over several lines, a duplicate key, a token the parser marks as an
// error) is left to `parseDocument`, which says what is wrong with it. So this reads only what
// the yaml package composes without an error or a warning, and gives the same data (yamlData)
// and the same positions (positionOf): test/model/yaml-plain.test.ts holds the two side by side
// over the repository's org files and thousands of mutations of them.
import { CST, Document, isScalar, LineCounter, Parser, type ScalarTag } from "yaml";
import type { SourcePosition } from "./diagnostic.js";
import { type PathSegment, parsePath } from "./diagnostic-path.js";
import { expectsString, objectBranch, type SchemaLike, setDataKey } from "./yaml.js";

/** Where a value starts: a scalar's offset, or a collection with its entries' places. */
type Place = number | MapPlace | ListPlace;

interface MapPlace {
  at: number;
  keys: string[];
  /** Where each key starts, in `keys`' order. */
  keyAt: number[];
  values: Place[];
}

interface ListPlace {
  at: number;
  items: Place[];
}

/** A file read from its tokens: its data, and where each of its values starts. */
export interface PlainYaml {
  data: Record<string, unknown>;
  root: MapPlace;
  lineCounter: LineCounter;
}

/** Thrown (and caught in readPlainYaml) as soon as the file is not in the plain subset. */
const NOT_PLAIN: unique symbol = Symbol("not plain");

const notPlain = (): never => {
  throw NOT_PLAIN;
};

/**
 * The core schema's tags and the options, as `parseDocument` resolves plain scalars with them
 * (`null`, `true`, `0x1f`, `1e3` ... by each tag's own test and resolve).
 */
const defaults = new Document();
const TAGS = defaults.schema.tags.filter(
  (tag): tag is ScalarTag & { test: RegExp } =>
    !tag.collection && tag.default === true && tag.test !== undefined,
);
const RESOLVE_OPTIONS = defaults.options;

/**
 * The file's data and places when it is plain YAML (see above) whose root is a mapping;
 * undefined otherwise, and the caller parses it with `parseDocument`. `schema` says where a
 * number keeps its source text, as yamlData does.
 */
export function readPlainYaml(text: string, schema: object): PlainYaml | undefined {
  const lineCounter = new LineCounter();
  try {
    let document: CST.Document | undefined;
    for (const token of new Parser(lineCounter.addNewLine).parse(text)) {
      if (token.type === "document" && document === undefined) document = token;
      else if (token.type !== "comment" && token.type !== "newline") return undefined;
    }
    if (document?.value?.type !== "block-map") return undefined;
    separators(document.start, true, undefined);
    if (document.end) trailing(document.end, true);
    const root = blockMap(document.value, schema as SchemaLike);
    return { data: root.value, root: root.place, lineCounter };
  } catch (error) {
    if (error === NOT_PLAIN) return undefined;
    throw error;
  }
}

/**
 * Where the value at `path` starts in a plain file, as positionOf places it in the composed
 * document: a path that does not exist at its nearest existing ancestor, a mapping entry at its
 * key with `key`.
 */
export function plainPositionOf(
  plain: PlainYaml,
  path: string | readonly PathSegment[],
  options: { key?: boolean } = {},
): SourcePosition {
  const segments = typeof path === "string" ? parsePath(path) : path;
  let place: Place = plain.root;
  let best = plain.root.at;
  for (const [index, segment] of segments.entries()) {
    let next: Place | undefined;
    if (typeof place === "number") break;
    if ("keys" in place) {
      const entry: number = typeof segment === "string" ? place.keys.indexOf(segment) : -1;
      if (entry < 0) break;
      next =
        index === segments.length - 1 && options.key ? place.keyAt[entry]! : place.values[entry]!;
    } else if (typeof segment === "number") {
      next = place.items[segment];
    }
    if (next === undefined) break;
    best = typeof next === "number" ? next : next.at;
    place = next;
  }
  return plain.lineCounter.linePos(best);
}

interface Read {
  value: unknown;
  place: Place;
}

function node(token: CST.Token, schema: SchemaLike | undefined): Read {
  switch (token.type) {
    case "block-map":
      return blockMap(token, schema);
    case "block-seq":
      return blockList(token, schema);
    case "flow-collection":
      return flowCollection(token, schema, false);
    case "scalar":
    case "single-quoted-scalar":
    case "double-quoted-scalar":
    case "block-scalar":
      return { value: scalarValue(token, schema), place: token.offset };
    default:
      return notPlain();
  }
}

function blockMap(
  map: CST.BlockMap,
  schema: SchemaLike | undefined,
): { value: Record<string, unknown>; place: MapPlace } {
  const properties = schema && (schema.properties ?? objectBranch(schema)?.properties);
  const value: Record<string, unknown> = {};
  const place: MapPlace = { at: map.offset, keys: [], keyAt: [], values: [] };
  const last = map.items.length - 1;
  for (let index = 0; index <= last; index++) {
    const item: CST.BlockMap["items"][number] & { key?: CST.Token | null } = map.items[index]!;
    const { start, key, sep, value: valueToken } = item;
    separators(start, true, undefined);
    if (!key && !sep && !valueToken) {
      // Comments alone may end a map; before an entry the package reports them as an error.
      if (index !== last) notPlain();
      continue;
    }
    if (!key || !sep || !valueToken || !isFlowScalar(key) || key.end?.length) notPlain();
    const keyToken = key as CST.FlowScalar;
    if (keyToken.indent !== map.indent || keyToken.source.includes("\n")) notPlain();
    const colon = separators(sep!, false, "map-value-ind");
    if (colon < 0) notPlain();
    // The yaml package limits an implicit key to 1024 characters before its `:`.
    if (colon - keyToken.offset > 512) notPlain();
    // A nested block collection starts on a line of its own (`a: b: c` is an error).
    if (
      (valueToken!.type === "block-map" || valueToken!.type === "block-seq") &&
      !sep!.some((t) => t.type === "newline")
    ) {
      notPlain();
    }
    putEntry(value, place, properties, keyToken, (inner) => node(valueToken!, inner));
  }
  return { value, place };
}

/** A mapping's entry: its key, its value read under the key's schema, and their places. */
function putEntry(
  value: Record<string, unknown>,
  place: MapPlace,
  properties: Record<string, SchemaLike> | undefined,
  key: CST.FlowScalar,
  read: (schema: SchemaLike | undefined) => Read,
): void {
  const name = keyOf(key);
  const entry = read(properties && Object.hasOwn(properties, name) ? properties[name] : undefined);
  define(value, name, entry.value);
  place.keys.push(name);
  place.keyAt.push(key.offset);
  place.values.push(entry.place);
}

function blockList(list: CST.BlockSequence, schema: SchemaLike | undefined): Read {
  const itemSchema = schema && (schema.items ?? objectBranch(schema)?.items);
  const value: unknown[] = [];
  const place: ListPlace = { at: list.offset, items: [] };
  for (const item of list.items) {
    const { start, value: valueToken } = item;
    if ((item as { sep?: unknown }).sep || (item as { key?: unknown }).key) notPlain();
    if (separators(start, true, "seq-item-ind") < 0) {
      if (valueToken) notPlain();
      continue;
    }
    // `-` alone is a null the yaml package places by its own rules: left to it.
    if (!valueToken) notPlain();
    const read = node(valueToken!, itemSchema);
    value.push(read.value);
    place.items.push(read.place);
  }
  return { value, place };
}

/**
 * A flow mapping or list on one line, of scalars and of such collections:
 * `{ digit: 1, action_type: queue }`, `[a, "b"]`, `{ sip: { md5_cred: ... } }`.
 */
function flowCollection(
  flow: CST.FlowCollection,
  schema: SchemaLike | undefined,
  nested: boolean,
): Read {
  const isMap = flow.start.source === "{";
  if (!isMap && flow.start.source !== "[") notPlain();
  const [close, ...after] = flow.end;
  if (close?.source !== (isMap ? "}" : "]")) notPlain();
  // Inside another flow collection, only spaces before its `,` or end.
  if (nested) spacesOnly(after);
  else trailing(after, false);
  // Each item after the first starts with its `,`; nothing but spaces around.
  flow.items.forEach((item, index) => {
    if (countAmongSpaces(item.start, "comma") !== (index === 0 ? 0 : 1)) notPlain();
  });
  return isMap ? flowMap(flow, schema) : flowList(flow, schema);
}

function flowMap(flow: CST.FlowCollection, schema: SchemaLike | undefined): Read {
  const properties = schema && (schema.properties ?? objectBranch(schema)?.properties);
  const value: Record<string, unknown> = {};
  const place: MapPlace = { at: flow.offset, keys: [], keyAt: [], values: [] };
  for (const { key, sep, value: valueToken } of flow.items) {
    if (!valueToken || !key || !sep || !isFlowScalar(key)) return notPlain();
    spacesOnly(key.end ?? []);
    if (key.source.includes("\n") || countAmongSpaces(sep, "map-value-ind") !== 1) notPlain();
    putEntry(value, place, properties, key, (inner) => flowValue(valueToken, inner));
  }
  return { value, place };
}

function flowList(flow: CST.FlowCollection, schema: SchemaLike | undefined): Read {
  const itemSchema = (schema && (schema.items ?? objectBranch(schema)?.items)) || undefined;
  const value: unknown[] = [];
  const place: ListPlace = { at: flow.offset, items: [] };
  for (const { key, sep, value: valueToken } of flow.items) {
    if (!valueToken || key || sep) return notPlain();
    const read = flowValue(valueToken, itemSchema);
    value.push(read.value);
    place.items.push(read.place);
  }
  return { value, place };
}

/** How many `type` tokens there are; anything else but spaces (no tab) is not plain. */
function countAmongSpaces(tokens: readonly CST.SourceToken[], type: "comma" | "map-value-ind") {
  let count = 0;
  for (const token of tokens) {
    if (token.type === type) count++;
    else if (token.type !== "space" || token.source.includes("\t")) notPlain();
  }
  return count;
}

/** A value inside a one-line flow collection: a scalar on that line, or a nested collection. */
function flowValue(token: CST.Token, schema: SchemaLike | undefined): Read {
  if (token.type === "flow-collection") return flowCollection(token, schema, true);
  if (!isFlowScalar(token) || token.source.includes("\n")) return notPlain();
  spacesOnly(token.end ?? []);
  return { value: scalarValue(token, schema), place: token.offset };
}

function spacesOnly(tokens: readonly CST.SourceToken[]): void {
  for (const token of tokens) if (token.type !== "space") notPlain();
}

/**
 * Where the separator tokens' `indicator` is (once at most; `-` or `:`), -1 without one;
 * anything but spaces, line breaks and comments after white space (and that indicator) is not
 * plain.
 */
function separators(
  tokens: readonly CST.SourceToken[],
  spaceBefore: boolean,
  indicator: "seq-item-ind" | "map-value-ind" | undefined,
): number {
  let hasSpace = spaceBefore;
  let found = -1;
  for (const token of tokens) {
    switch (token.type) {
      case "space":
        if (token.source.includes("\t")) notPlain();
        hasSpace = true;
        break;
      case "newline":
        hasSpace = true;
        break;
      case "comment":
        if (!hasSpace) notPlain();
        break;
      default:
        if (token.type !== indicator || found >= 0) notPlain();
        found = token.offset;
        hasSpace = false;
    }
  }
  return found;
}

/** What may follow a node: spaces, line breaks, comments (after white space unless `loose`). */
function trailing(tokens: readonly CST.SourceToken[], loose: boolean): void {
  let hasSpace = loose;
  for (const token of tokens) {
    if (token.type === "comment") {
      if (!hasSpace) notPlain();
    } else if (token.type === "space" || token.type === "newline") hasSpace = true;
    else notPlain();
  }
}

function isFlowScalar(token: CST.Token): token is CST.FlowScalar {
  return (
    token.type === "scalar" ||
    token.type === "single-quoted-scalar" ||
    token.type === "double-quoted-scalar"
  );
}

/** A key's text; a key the core schema reads as anything but a string is not plain. */
function keyOf(token: CST.FlowScalar): string {
  const name = scalarValue(token, undefined);
  // `<<` is a merge key in YAML 1.1, which yamlData leaves to the yaml package.
  if (typeof name !== "string" || name === "<<") notPlain();
  return name as string;
}

/** Sets a key as yamlData does; a duplicate is the yaml package's error ("Map keys must be unique"). */
function define(map: Record<string, unknown>, name: string, value: unknown): void {
  if (Object.hasOwn(map, name)) notPlain();
  setDataKey(map, name, value);
}

/**
 * A scalar's value as the yaml package composes it: its text by the package's own scalar
 * reading (quotes, escapes, folding, block scalars; an error in it is not plain), then a plain
 * scalar's type by the core schema's tags; a number keeps its text where the schema expects a
 * string (yamlData).
 */
function scalarValue(
  token: CST.FlowScalar | CST.BlockScalar,
  schema: SchemaLike | undefined,
): unknown {
  const text = scalarText(token);
  if (token.type !== "scalar" || !mayBeTyped(text)) return text;
  const tag = TAGS.find((t) => t.test.test(text));
  if (!tag) return text;
  const resolvedValue = tag.resolve(text, notPlain, RESOLVE_OPTIONS);
  const value = isScalar(resolvedValue) ? resolvedValue.value : resolvedValue;
  return typeof value === "number" && schema && expectsString(schema) ? text : value;
}

/**
 * A scalar's text. A plain scalar on one line is its source, as the package's own reading would
 * answer (`plainValue`: no line to fold; a start it reports, such as `@` or `%`, is not plain),
 * after the same check of what follows it (`resolveEnd`: a comment after white space); anything
 * else is read by the package.
 */
function scalarText(token: CST.FlowScalar | CST.BlockScalar): string {
  if (
    token.type === "scalar" &&
    !token.source.includes("\n") &&
    !BAD_PLAIN_START.includes(token.source.charAt(0))
  ) {
    if (token.end) trailing(token.end, false);
    return token.source;
  }
  const resolved = CST.resolveAsScalar(token, true, notPlain);
  return resolved ? resolved.value : notPlain();
}

/** What a plain scalar may not start with (the yaml package's `plainValue` reports these). */
const BAD_PLAIN_START = ["\t", ",", "%", "|", ">", "@", "`"];

/**
 * Whether a core schema tag could match: a number's forms (decimal, octal, hex, float, `.inf`,
 * `.nan`) start with a digit, a sign or a dot; null and the booleans are these words alone.
 */
function mayBeTyped(text: string): boolean {
  const first = text.charCodeAt(0);
  return (
    (first >= 48 && first <= 57) || first === 43 || first === 45 || first === 46 || WORDS.has(text)
  );
}

const WORDS = new Set([
  "",
  "~",
  "null",
  "Null",
  "NULL",
  "true",
  "True",
  "TRUE",
  "false",
  "False",
  "FALSE",
]);
