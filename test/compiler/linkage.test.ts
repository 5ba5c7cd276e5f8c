// Without an Asterisk binary here, this is the next best check that compiled files would load and
// route calls: every reference in them resolves. Goto/Gosub/include/Local targets name existing
// contexts, extensions and labels; Dial(PJSIP/...) names an endpoint; Queue() a queue; VoiceMail()
// a mailbox; PJSIP auth/aors/context options name sections and contexts that exist; top-level
// #include lines name files that were generated.
import { test } from "uvu";
import * as assert from "uvu/assert";
import type { CompiledFile } from "../../src/compiler/index.js";
import { compileCase, listCases } from "./golden.js";

interface Dialplan {
  /** context -> extension -> labels */
  contexts: Map<string, Map<string, Set<string>>>;
  includes: { from: string; to: string }[];
  apps: { context: string; app: string }[];
}

function parseDialplan(files: CompiledFile[]): Dialplan {
  const plan: Dialplan = { contexts: new Map(), includes: [], apps: [] };
  for (const file of files.filter((f) => f.path.endsWith("extensions.conf"))) {
    let context = "";
    let exten = "";
    for (const line of file.content.split("\n")) {
      const section = /^\[(.+)\]$/.exec(line);
      if (section) {
        context = section[1]!;
        if (plan.contexts.has(context)) throw new Error(`context ${context} defined twice`);
        plan.contexts.set(context, new Map());
        continue;
      }
      const include = /^include => (.+)$/.exec(line);
      if (include) plan.includes.push({ from: context, to: include[1]! });
      const step = /^(?:exten => ([^,]+),1| same => n)(?:\(([a-z]+)\))?,(.*)$/.exec(line);
      if (!step) continue;
      if (step[1] !== undefined) {
        exten = step[1];
        const extens = plan.contexts.get(context)!;
        if (extens.has(exten)) throw new Error(`${context},${exten} defined twice`);
        extens.set(exten, new Set());
      }
      if (step[2]) plan.contexts.get(context)!.get(exten)!.add(step[2]);
      plan.apps.push({ context, app: step[3]! });
    }
  }
  return plan;
}

/** Asterisk pattern matching for the subset the compiler writes (X Z N [..] . !). */
function matchesPattern(pattern: string, exten: string): boolean {
  let regex = "^";
  for (let i = 1; i < pattern.length; i++) {
    const ch = pattern[i]!;
    if (ch === "X") regex += "[0-9]";
    else if (ch === "Z") regex += "[1-9]";
    else if (ch === "N") regex += "[2-9]";
    else if (ch === ".") regex += ".+";
    else if (ch === "!") regex += ".*";
    else if (ch === "[") {
      const end = pattern.indexOf("]", i);
      regex += `[${pattern.slice(i + 1, end)}]`;
      i = end;
    } else regex += ch.replace(/[*+#]/g, "\\$&");
  }
  return new RegExp(`${regex}$`).test(exten);
}

function hasExten(plan: Dialplan, context: string, exten: string): boolean {
  const seen = new Set<string>();
  const visit = (name: string): boolean => {
    if (seen.has(name)) return false;
    seen.add(name);
    const extens = plan.contexts.get(name);
    if (!extens) return false;
    if (extens.has(exten)) return true;
    for (const candidate of extens.keys()) {
      if (candidate.startsWith("_") && matchesPattern(candidate, exten)) return true;
    }
    return plan.includes.filter((i) => i.from === name).some((i) => visit(i.to));
  };
  return visit(context);
}

function sections(files: CompiledFile[], suffix: string): Map<string, Map<string, string[]>[]> {
  const found = new Map<string, Map<string, string[]>[]>();
  for (const file of files.filter((f) => f.path.endsWith(suffix))) {
    let current: Map<string, string[]> | null = null;
    for (const line of file.content.split("\n")) {
      const header = /^\[(.+)\]$/.exec(line);
      if (header) {
        current = new Map();
        found.set(header[1]!, [...(found.get(header[1]!) ?? []), current]);
        continue;
      }
      const option = /^([^=;]+)=(.*)$/.exec(line);
      if (option && current)
        current.set(option[1]!, [...(current.get(option[1]!) ?? []), option[2]!]);
    }
  }
  return found;
}

function checkLinkage(files: CompiledFile[]): string[] {
  const problems: string[] = [];
  const plan = parseDialplan(files);
  const pjsip = sections(files, "pjsip.conf");
  const queues = sections(files, "queues.conf");
  const voicemail = sections(files, "voicemail.conf");
  const ofType = (name: string, type: string) =>
    (pjsip.get(name) ?? []).some((s) => s.get("type")?.[0] === type);
  const needExten = (where: string, context: string, exten: string, label?: string) => {
    if (exten.includes("${")) {
      if (!plan.contexts.has(context)) problems.push(`${where}: no context ${context}`);
      return;
    }
    if (!hasExten(plan, context, exten)) problems.push(`${where}: no ${context},${exten}`);
    else if (label && !/^\d+$/.test(label) && !plan.contexts.get(context)?.get(exten)?.has(label)) {
      problems.push(`${where}: no label ${label} at ${context},${exten}`);
    }
  };

  for (const { from, to } of plan.includes) {
    if (!plan.contexts.has(to)) problems.push(`${from}: includes missing context ${to}`);
  }
  for (const { context, app } of plan.apps) {
    const where = `${context}: ${app}`;
    for (const m of app.matchAll(
      /(?:Goto|Gosub)\(([^,()]+),([^,()]+|\$\{[^}]*\}|\$\{IF\(.*?\)\}),([A-Za-z0-9]+)/g,
    )) {
      needExten(where, m[1]!, m[2]!, m[3]);
    }
    const gotoIf = /GotoIf\(.*\?([^,()]+),([^,()]+),([a-z0-9]+)\)$/.exec(app);
    if (gotoIf) needExten(where, gotoIf[1]!, gotoIf[2]!, gotoIf[3]);
    const localLabel = /GotoIf\(.*\?([a-z]+)\)$/.exec(app);
    if (localLabel) {
      const labels = [...(plan.contexts.get(context)?.values() ?? [])].flatMap((l) => [...l]);
      if (!labels.includes(localLabel[1]!)) problems.push(`${where}: no label ${localLabel[1]}`);
    }
    for (const m of app.matchAll(/Local\/([^@]+)@([^/]+)\/n/g)) needExten(where, m[2]!, m[1]!);
    const dial = /^Dial\(PJSIP\/([^,)]+)/.exec(app);
    if (dial) {
      // PJSIP/[user@]endpoint[/uri]: the endpoint is between the `@` and the `/`.
      const target = dial[1]!.split("/")[0]!;
      const endpoint = target.includes("@") ? target.slice(target.indexOf("@") + 1) : target;
      if (
        !endpoint.includes("${") &&
        !ofType(endpoint, "endpoint") &&
        endpoint !== "staging-tunnel"
      ) {
        problems.push(`${where}: no PJSIP endpoint ${endpoint}`);
      }
    }
    const queue = /^Queue\(([^,)]+)/.exec(app);
    if (queue && !queues.has(queue[1]!)) problems.push(`${where}: no queue ${queue[1]}`);
    const box = /^VoiceMail\(([0-9]+)@([^,)]+)/.exec(app);
    if (box && !voicemail.get(box[2]!)?.some((s) => s.has(box[1]!))) {
      problems.push(`${where}: no mailbox ${box[1]}@${box[2]}`);
    }
  }
  for (const [name, list] of pjsip) {
    for (const section of list) {
      const type = section.get("type")?.[0];
      for (const key of ["auth", "outbound_auth"]) {
        const ref = section.get(key)?.[0];
        if (ref && !ofType(ref, "auth"))
          problems.push(`pjsip ${name} (${type}): ${key}=${ref} is not an auth`);
      }
      const aors = section.get("aors")?.[0];
      if (aors && !ofType(aors, "aor")) problems.push(`pjsip ${name}: aors=${aors} is not an aor`);
      const endpoint = section.get("endpoint")?.[0];
      if (endpoint && !ofType(endpoint, "endpoint"))
        problems.push(`pjsip ${name} (${type}): endpoint=${endpoint} missing`);
      const context = section.get("context")?.[0];
      if (context && !plan.contexts.has(context))
        problems.push(`pjsip ${name}: context ${context} missing`);
    }
  }
  for (const [name, list] of queues) {
    for (const member of list.flatMap((s) => s.get("member") ?? [])) {
      const [iface, , , state] = member.split(",");
      const local = /^Local\/([^@]+)@([^/]+)\/n$/.exec(iface!);
      if (!local) problems.push(`queue ${name}: member ${iface} is not a Local channel`);
      else needExten(`queue ${name}`, local[2]!, local[1]!);
      if (state && !ofType(state.replace(/^PJSIP\//, ""), "endpoint"))
        problems.push(`queue ${name}: state ${state} missing`);
    }
  }
  const paths = new Set(files.map((f) => f.path));
  for (const file of files.filter((f) => !f.path.includes("/"))) {
    for (const m of file.content.matchAll(/^#include "(.+)"$/gm)) {
      if (!paths.has(m[1]!)) problems.push(`${file.path}: includes missing ${m[1]}`);
    }
  }
  return problems;
}

for (const name of listCases()) {
  test(`linkage: ${name}`, () => {
    const result = compileCase(name);
    const erroneous = result.diagnostics.some((d) => d.severity === "error");
    const problems = checkLinkage(result.files);
    if (erroneous) return; // cases that must fail validation may leave gaps; they never deploy
    assert.equal(problems, [], name);
  });
}

test("the linkage check notices a dangling reference", () => {
  const result = compileCase("01-ivr-every-option");
  const broken = result.files.map((f) =>
    f.path.endsWith("extensions.conf")
      ? { ...f, content: f.content.replace(/_queue,600,1\)/, "_queue,699,1)") }
      : f,
  );
  assert.ok(checkLinkage(broken).some((p) => p.includes(",699")));
});

test.run();
