// What to ask the engine after a reload, to know the reload took effect. Asterisk answers
// `dialplan reload` and `module reload res_pjsip.so` as successful even when it refused the
// whole file (a missing #include, a syntax error) and kept the old configuration, so a deploy
// counts as applied only when the objects it added are there and those it removed are gone
// (`dialplan show`, `pjsip show endpoint`, `queue show`, `moh show classes`). Pure: text in,
// probes out.
import type { EngineProbe } from "../engine/target.js";
import { type EngineModule, moduleOf } from "./reloads.js";

/** At most this many probes per file: a check, not a second copy of the config. */
const PER_FILE = 4;

interface Objects {
  /** Probe-able names in file order. */
  names: string[];
  /** Text of each object, to find one that changed. */
  text: Map<string, string>;
}

/** `[name]` sections with their body lines. */
function sections(content: string): Array<{ name: string; body: string }> {
  const found: Array<{ name: string; body: string }> = [];
  let current: { name: string; lines: string[] } | null = null;
  for (const line of content.split("\n")) {
    const header = /^\[([^\]\r\n]+)\]/.exec(line);
    if (header) {
      if (current) found.push({ name: current.name, body: current.lines.join("\n") });
      current = { name: header[1]!, lines: [] };
    } else current?.lines.push(line);
  }
  if (current) found.push({ name: current.name, body: current.lines.join("\n") });
  return found;
}

function objectsOf(module: EngineModule, content: string | null): Objects {
  const objects: Objects = { names: [], text: new Map() };
  if (content === null) return objects;
  const add = (name: string, text: string) => {
    if (objects.text.has(name)) objects.text.set(name, objects.text.get(name) + text);
    else {
      objects.names.push(name);
      objects.text.set(name, text);
    }
  };
  for (const { name, body } of sections(content)) {
    if (module === "dialplan") add(name, body);
    else if (module === "pjsip" && /^type\s*=\s*endpoint\s*$/m.test(body)) add(name, body);
    else if (module === "queues" && name !== "general") add(name, body);
    else if (module === "moh") add(name, body);
  }
  return objects;
}

const KIND: Partial<Record<EngineModule, EngineProbe["kind"]>> = {
  dialplan: "context",
  pjsip: "endpoint",
  queues: "queue",
  moh: "music class",
};

/** Literal extensions (`exten => 101,1,...`) of a context body; patterns match too widely. */
function literalExtensions(body: string): Set<string> {
  const found = new Set<string>();
  for (const match of body.matchAll(/^exten\s*=>\s*([^,_\s][^,\s]*),1,/gm)) found.add(match[1]!);
  return found;
}

/**
 * Probes for one file's change: objects added must be present, objects removed absent; when
 * nothing was added or removed, a changed object (and a dialplan extension it gained) must be
 * present. Files of modules nothing can be asked about (voicemail) give none.
 */
export function probesForChange(
  path: string,
  before: string | null,
  after: string | null,
): EngineProbe[] {
  const module = moduleOf(path);
  const kind = module ? KIND[module] : undefined;
  if (!module || !kind || before === after) return [];
  const old = objectsOf(module, before);
  const now = objectsOf(module, after);
  const probes: EngineProbe[] = [];
  for (const name of now.names) {
    if (!old.text.has(name)) probes.push({ kind, name, present: true, path });
  }
  for (const name of old.names) {
    if (!now.text.has(name)) probes.push({ kind, name, present: false, path });
  }
  if (probes.length === 0) {
    const changed = now.names.find((name) => old.text.get(name) !== now.text.get(name));
    if (changed) {
      probes.push({ kind, name: changed, present: true, path });
      if (module === "dialplan") {
        const had = literalExtensions(old.text.get(changed) ?? "");
        for (const exten of literalExtensions(now.text.get(changed)!)) {
          if (!had.has(exten)) {
            probes.push({ kind: "extension", name: `${exten}@${changed}`, present: true, path });
          }
        }
      }
    }
  }
  return probes.slice(0, PER_FILE);
}

/** Probes for every file change of a deploy. */
export function probesFor(
  changes: ReadonlyArray<{ path: string; before: string | null; after: string | null }>,
): EngineProbe[] {
  return changes.flatMap((change) => probesForChange(change.path, change.before, change.after));
}
