// Whether this process can use the media directories (sounds: greetings and music on hold;
// recordings). With several replicas they must be one shared mount that every replica and the
// engine see: a greeting generated through one replica is played by the engine and downloaded
// through another. Checked by writing, reading back and removing a probe file; `/health` says
// which directory failed, so an operator sees a replica whose mount is missing or read-only.
import { randomBytes } from "node:crypto";
import { mkdir, readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";

export interface MediaDirStatus {
  dir: string;
  ok: boolean;
  /** Why not, when not. */
  error?: string;
}

/** Probes one directory (created if missing, as the writers do). */
export async function probeMediaDir(dir: string): Promise<MediaDirStatus> {
  const probe = join(dir, `.pbxctl-probe-${process.pid}-${randomBytes(4).toString("hex")}`);
  const content = randomBytes(8).toString("hex");
  try {
    await mkdir(dir, { recursive: true });
    await writeFile(probe, content);
    if ((await readFile(probe, "utf8")) !== content) throw new Error("read back something else");
    return { dir, ok: true };
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return { dir, ok: false, error: code ?? (error as Error).message };
  } finally {
    await rm(probe, { force: true }).catch(() => {});
  }
}

/**
 * A probe of the named directories, answered as `{ name: "ok" | error code }` and remembered for
 * `maxAgeMs` (a load balancer asks `/health` every few seconds; the disk need not be touched each
 * time), `now` being a monotonic reading in milliseconds.
 */
export function mediaDirsProbe(
  dirs: Readonly<Record<string, string>>,
  now: () => number,
  maxAgeMs = 5000,
): () => Promise<Record<string, string>> {
  let last: { at: number; result: Promise<Record<string, string>> } | null = null;
  const probeAll = async () => {
    const entries = await Promise.all(
      Object.entries(dirs).map(async ([name, dir]) => {
        const status = await probeMediaDir(dir);
        return [name, status.ok ? "ok" : (status.error ?? "error")] as const;
      }),
    );
    return Object.fromEntries(entries);
  };
  return () => {
    const at = now();
    if (!last || at - last.at >= maxAgeMs) last = { at, result: probeAll() };
    return last.result;
  };
}
