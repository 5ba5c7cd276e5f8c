// What the fake AMI server's "engine" has loaded from an engine directory: dialplan contexts and
// literal extensions, PJSIP endpoints, queues, music-on-hold classes. Loaded per module at each reload the way Asterisk
// 22 reads a config file: `#include` resolved against the config directory, and reading stops
// at an include of a missing file (Asterisk logs it and keeps only what it read before it).
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { isAbsolute, join } from "node:path";

type Section = { name: string; lines: string[] };

export class FakeEngineConfig {
  private contexts = new Map<string, Set<string>>();
  private endpoints = new Set<string>();
  private queues = new Set<string>();
  /** Music-on-hold classes from musiconhold.conf: name -> `directory=`. */
  private musicClasses = new Map<string, string>();

  /**
   * `implicitIncludes`: when a top-level file is missing, read every org's file of that kind
   * (as a top-level wildcard include would), for tests that deploy org units alone.
   */
  constructor(
    private readonly dir: string,
    private readonly implicitIncludes = false,
  ) {
    for (const module of ["pbx_config.so", "res_pjsip.so", "app_queue.so", "res_musiconhold.so"]) {
      this.loadModule(module);
    }
  }

  /**
   * Re-reads the files of one module (`pbx_config.so`, `res_pjsip.so`, `app_queue.so`,
   * `res_musiconhold.so`).
   */
  loadModule(module: string): void {
    if (module === "pbx_config.so") {
      this.contexts = new Map();
      for (const section of this.read("extensions.conf")) {
        const extensions = this.contexts.get(section.name) ?? new Set<string>();
        for (const line of section.lines) {
          const exten = /^exten\s*=>\s*([^,]+),/.exec(line)?.[1];
          if (exten) extensions.add(exten);
        }
        this.contexts.set(section.name, extensions);
      }
    } else if (module === "res_pjsip.so") {
      this.endpoints = new Set(
        this.read("pjsip.conf")
          .filter((s) => s.lines.some((line) => /^type\s*=\s*endpoint\s*$/.test(line)))
          .map((s) => s.name),
      );
    } else if (module === "res_musiconhold.so") {
      this.musicClasses = new Map(
        this.read("musiconhold.conf").map((s) => [
          s.name,
          s.lines.find((line) => line.startsWith("directory="))?.slice("directory=".length) ?? "",
        ]),
      );
    } else if (module === "app_queue.so") {
      this.queues = new Set(
        this.read("queues.conf")
          .map((s) => s.name)
          .filter((name) => name !== "general"),
      );
    }
  }

  /** The org music classes loaded (the engine's own `default` is not in the generated tree). */
  classes(): ReadonlyMap<string, string> {
    return this.musicClasses;
  }

  /** Whether the object a probe command names is loaded. */
  has(command: string, name: string): boolean {
    if (command === "pjsip show endpoint") return this.endpoints.has(name);
    if (command === "queue show") return this.queues.has(name);
    const at = name.indexOf("@");
    if (at < 0) return this.contexts.has(name);
    return this.contexts.get(name.slice(at + 1))?.has(name.slice(0, at)) ?? false;
  }

  /** The sections of a file and of everything it includes, in order, up to a missing include. */
  private read(file: string): Section[] {
    const sections: Section[] = [];
    let current: Section | null = null;
    const walk = (path: string): boolean => {
      const full = isAbsolute(path) ? path : join(this.dir, path);
      if (!existsSync(full)) return false;
      for (const line of readFileSync(full, "utf8").split("\n")) {
        const include = /^#include\s+"([^"]+)"/.exec(line);
        if (include) {
          if (!walk(include[1]!)) return false;
          continue;
        }
        const header = /^\[([^\]]+)\]/.exec(line);
        if (header) {
          current = { name: header[1]!, lines: [] };
          sections.push(current);
        } else current?.lines.push(line.trim());
      }
      return true;
    };
    if (!walk(file) && this.implicitIncludes && !existsSync(join(this.dir, file))) {
      const orgs = existsSync(join(this.dir, "orgs")) ? readdirSync(join(this.dir, "orgs")) : [];
      for (const prefix of orgs.sort()) walk(join("orgs", prefix, file));
    }
    return sections;
  }
}
