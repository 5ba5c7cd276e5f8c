// IVR greeting files: `<sounds>/greetings/greeting_ivr_<id>.wav`, which the dialplan plays as
// `Background(greetings/greeting_ivr_<id>)`. Written atomically so that a call never plays a
// half-written file, even while the greeting is being regenerated.
import { randomBytes } from "node:crypto";
import { mkdir, open, rename, rm, unlink } from "node:fs/promises";
import { join } from "node:path";
import { InvalidGreetingIdError } from "./errors.js";

/** Sub-directory of the sounds directory that holds generated greetings. */
export const GREETINGS_DIR = "greetings";

// IVR ids are UUIDs; anything that could step out of the directory is refused.
const SAFE_ID = /^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$/;

/** The `greeting_prompt` value of an IVR: the sound name without directory or extension. */
export function greetingPrompt(ivrId: string): string {
  if (!SAFE_ID.test(ivrId)) throw new InvalidGreetingIdError(ivrId);
  return `greeting_ivr_${ivrId}`;
}

/** Absolute or relative path of the greeting file of `ivrId` under `soundsDir`. */
export function greetingPath(soundsDir: string, ivrId: string): string {
  return join(soundsDir, GREETINGS_DIR, `${greetingPrompt(ivrId)}.wav`);
}

/**
 * Replaces the greeting of `ivrId` with `wav` atomically (temporary file in the same directory,
 * fsync, rename, directory fsync); creates `greetings/` if needed. Returns the file's path.
 */
export async function writeGreeting(
  soundsDir: string,
  ivrId: string,
  wav: Uint8Array,
): Promise<string> {
  const target = greetingPath(soundsDir, ivrId);
  const directory = join(soundsDir, GREETINGS_DIR);
  await mkdir(directory, { recursive: true });
  const temporary = join(
    directory,
    `.${greetingPrompt(ivrId)}.${process.pid}.${randomBytes(6).toString("hex")}.tmp`,
  );
  try {
    const file = await open(temporary, "wx", 0o644);
    try {
      await file.writeFile(wav);
      await file.sync();
    } finally {
      await file.close();
    }
    await rename(temporary, target);
  } catch (error) {
    await rm(temporary, { force: true });
    throw error;
  }
  await syncDirectory(directory);
  return target;
}

/** Deletes the greeting of `ivrId`; true if a file was removed, false if there was none. */
export async function removeGreeting(soundsDir: string, ivrId: string): Promise<boolean> {
  try {
    await unlink(greetingPath(soundsDir, ivrId));
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return false;
    throw error;
  }
}

// Makes the rename itself durable. Some platforms cannot open directories; the rename is still
// atomic there, only not yet durable, so that failure is ignored.
async function syncDirectory(directory: string): Promise<void> {
  try {
    const handle = await open(directory, "r");
    try {
      await handle.sync();
    } finally {
      await handle.close();
    }
  } catch {
    // best effort, see above
  }
}
