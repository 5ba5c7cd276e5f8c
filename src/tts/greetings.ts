// IVR greeting files: `<sounds>/greetings/greeting_ivr_<id>.wav`, which the dialplan plays as
// `Background(greetings/greeting_ivr_<id>)`. Written atomically so that a call never plays a
// half-written file, even while the greeting is being regenerated.
import { unlink } from "node:fs/promises";
import { join } from "node:path";
import { writeFileAtomic } from "../atomic-files.js";
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
 * Replaces the greeting of `ivrId` with `wav` atomically and durably (src/atomic-files.ts);
 * creates `greetings/` if needed. Returns the file's path.
 */
export async function writeGreeting(
  soundsDir: string,
  ivrId: string,
  wav: Uint8Array,
): Promise<string> {
  const target = greetingPath(soundsDir, ivrId);
  await writeFileAtomic(target, wav);
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
