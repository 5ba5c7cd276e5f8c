// The music-on-hold files an org has on disk, as the compiler wants them (OrgState.music_on_hold):
// `<sounds>/moh/<org id>/<name>.wav`, the folder the API's `/music-on-hold` uploads go to and the
// org's music class plays (`directory=sounds/moh/<org id>` under Asterisk's data directory).
import { readdir } from "node:fs/promises";
import { join } from "node:path";
import { MEDIA_FILE_NAME } from "../model/org-state.js";

const NAME = new RegExp(MEDIA_FILE_NAME);
const UUID = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;

/** The org's music-on-hold folder; the org id must be a UUID, so it cannot leave `moh/`. */
export function orgMohFolder(soundsDir: string, orgId: string): string {
  if (!UUID.test(orgId)) throw new Error(`not an org id: ${orgId}`);
  return join(soundsDir, "moh", orgId);
}

/**
 * Names (without `.wav`) of the WAV files in `directory` that follow the upload naming rule,
 * sorted; none when the directory does not exist. Anything else dropped there by hand is ignored.
 */
export async function wavNamesIn(directory: string): Promise<string[]> {
  let entries: string[];
  try {
    entries = await readdir(directory);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return [];
    throw error;
  }
  return entries
    .filter((entry) => entry.endsWith(".wav") && NAME.test(entry.slice(0, -4)))
    .map((entry) => entry.slice(0, -4))
    .sort();
}

/** The org's music-on-hold file names, sorted. */
export function mohFileNames(soundsDir: string, orgId: string): Promise<string[]> {
  return wavNamesIn(orgMohFolder(soundsDir, orgId));
}
