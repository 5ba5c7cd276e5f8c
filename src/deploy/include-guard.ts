// An include file may only name files that are on disk. Asterisk refuses a whole config file —
// every org's PJSIP endpoints or dialplan, not only the missing one's — when one `#include`
// names a file that does not exist, yet still answers the reload as successful. Seen in Asterisk
// 22.10: one org's deploy rewrote the top-level files naming an org created a moment earlier,
// whose own deploy was still waiting for its debounce. So the deployer writes the top-level
// files last and keeps only the includes whose target exists; the org's own deploy adds it.

const INCLUDE = /^#include\s+"([^"]*)"\s*$/;

/** The engine-relative path an include names (`orgs/<prefix>/<file>` or `gateway/<file>`). */
export function includedPath(target: string): string | null {
  const match = /(?:^|\/)((?:orgs\/[^/]+|gateway)\/[^/]+)$/.exec(target);
  return match ? match[1]! : null;
}

export interface GuardedIncludes {
  content: string;
  /** Engine-relative paths of the includes left out because their file is not on disk. */
  dropped: string[];
}

/** Drops the `#include` lines of `content` whose file `exists` says is missing. Pure. */
export function keepIncludesOnDisk(
  content: string,
  exists: (enginePath: string) => boolean,
): GuardedIncludes {
  const dropped: string[] = [];
  const lines = content.split("\n").filter((line) => {
    const match = INCLUDE.exec(line);
    if (!match) return true;
    const path = includedPath(match[1]!);
    if (path === null || exists(path)) return true;
    dropped.push(path);
    return false;
  });
  return { content: dropped.length > 0 ? lines.join("\n") : content, dropped };
}

/** The engine-relative paths `content`'s include lines name (to look them up all at once). */
export function includedPaths(content: string): string[] {
  const paths: string[] = [];
  for (const line of content.split("\n")) {
    const match = INCLUDE.exec(line);
    const path = match ? includedPath(match[1]!) : null;
    if (path !== null) paths.push(path);
  }
  return paths;
}
