// Custom greetings and music-on-hold files of an org: uploaded WAV audio is converted to what the
// engine plays natively (8 kHz, 16-bit, mono PCM) and kept under
// `<sounds>/custom/<org_id>/<name>.wav` (played as `custom/<org_id>/<name>`) and
// `<sounds>/moh/<org_id>/<name>.wav` (the org's music-on-hold directory).
// File names are either chosen by the server or held to `^[a-z0-9_-]{1,64}$`, and the directory
// comes from the org id of the credential, so nothing in a request can name a path outside it.
import { randomBytes } from "node:crypto";
import { readFile, stat, unlink } from "node:fs/promises";
import { join } from "node:path";
import { writeFileAtomic } from "../../atomic-files.js";
import { wavNamesIn } from "../../deploy/moh-files.js";
import type { MediaFileView } from "../../model/media-views.js";
import { MEDIA_FILE_NAME } from "../../model/org-state.js";
import { TtsInputError } from "../../tts/errors.js";
import { TELEPHONY_SAMPLE_RATE } from "../../tts/resample.js";
import { toTelephonyWav } from "../../tts/telephony-wav.js";
import { parseWav } from "../../tts/wav.js";
import { notifyConfigChanged } from "../config/config-change.js";
import type { DomainDeps } from "../deps.js";
import { BadRequest, NotFound } from "../errors.js";

export type MediaKind = "greeting" | "moh";

/** Largest accepted upload: about 20 minutes of 8 kHz audio, or 2 minutes of CD-quality stereo. */
export const MAX_UPLOAD_BYTES = 20 * 1024 * 1024;

/** The model's rule: the compiler lists music-on-hold files by these names. */
export const MEDIA_NAME_PATTERN = MEDIA_FILE_NAME;
const MEDIA_NAME = new RegExp(MEDIA_NAME_PATTERN);

const KINDS: Record<MediaKind, { dir: string; label: string; prefix: string }> = {
  greeting: { dir: "custom", label: "Greeting", prefix: "greeting" },
  moh: { dir: "moh", label: "Music on hold file", prefix: "moh" },
};

/** The org's directory of `kind` files; the org id is a UUID from the credential. */
export function mediaDir(soundsDir: string, kind: MediaKind, orgId: string): string {
  if (!/^[0-9a-fA-F-]{36}$/.test(orgId)) throw new Error(`not an org id: ${orgId}`);
  return join(soundsDir, KINDS[kind].dir, orgId);
}

function checkedName(name: string): string {
  if (!MEDIA_NAME.test(name)) {
    throw new BadRequest(
      "name must be 1-64 characters of lower-case letters, digits, '_' or '-' (no extension)",
    );
  }
  return name;
}

async function describe(
  directory: string,
  kind: MediaKind,
  orgId: string,
  name: string,
): Promise<MediaFileView> {
  const path = join(directory, `${name}.wav`);
  const [info, bytes] = await Promise.all([stat(path), readFile(path)]);
  let sampleRate = TELEPHONY_SAMPLE_RATE;
  let samples = 0;
  try {
    const wav = parseWav(bytes);
    sampleRate = wav.sampleRate;
    samples = wav.pcm.length;
  } catch {
    // A foreign file dropped in by hand: listed with what the file system knows.
  }
  return {
    name,
    sound: `${KINDS[kind].dir}/${orgId}/${name}`,
    size: info.size,
    sample_rate: sampleRate,
    duration_seconds: Math.round((samples / sampleRate) * 1000) / 1000,
    updated_at: info.mtime.toISOString(),
  };
}

/**
 * Converts and stores an upload; `name` is validated, or chosen by the server when absent.
 * Re-uploading a name replaces the file atomically.
 */
export async function uploadMedia(
  deps: DomainDeps,
  kind: MediaKind,
  orgId: string,
  input: { name?: string; audio: Uint8Array },
): Promise<MediaFileView> {
  const name =
    input.name === undefined
      ? `${KINDS[kind].prefix}_${randomBytes(6).toString("hex")}`
      : checkedName(input.name);
  let wav: Uint8Array;
  try {
    wav = toTelephonyWav(input.audio);
  } catch (error) {
    if (error instanceof TtsInputError) throw new BadRequest(error.message);
    throw error;
  }
  const directory = mediaDir(deps.config.soundsDir, kind, orgId);
  // A call playing the old file keeps it open; the rename never shows a half-written one.
  await writeFileAtomic(join(directory, `${name}.wav`), wav);
  await notifyChanged(deps, kind, orgId);
  return describe(directory, kind, orgId, name);
}

/** The org's files of `kind`, by name. */
export async function listMedia(
  deps: DomainDeps,
  kind: MediaKind,
  orgId: string,
): Promise<MediaFileView[]> {
  const directory = mediaDir(deps.config.soundsDir, kind, orgId);
  const names = await wavNamesIn(directory);
  return Promise.all(names.map((name) => describe(directory, kind, orgId, name)));
}

/** The bytes of one file (`audio/wav`); 404 when the org has no file of that name. */
export async function readMedia(
  deps: DomainDeps,
  kind: MediaKind,
  orgId: string,
  name: string,
): Promise<Buffer> {
  const path = join(mediaDir(deps.config.soundsDir, kind, orgId), `${checkedName(name)}.wav`);
  try {
    return await readFile(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") {
      throw new NotFound(`${KINDS[kind].label} not found`);
    }
    throw error;
  }
}

/** Deletes one file; 404 when the org has no file of that name. */
export async function deleteMedia(
  deps: DomainDeps,
  kind: MediaKind,
  orgId: string,
  name: string,
): Promise<void> {
  const path = join(mediaDir(deps.config.soundsDir, kind, orgId), `${checkedName(name)}.wav`);
  try {
    await unlink(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") {
      throw new NotFound(`${KINDS[kind].label} not found`);
    }
    throw error;
  }
  await notifyChanged(deps, kind, orgId);
}

/**
 * The org's music class lists its files (and exists only while there are some), so a change to
 * them is a configuration change: deploy the org. Greetings are played by name and need none,
 * except where the engine plays copies that the org's deploy makes (engine nodes).
 */
async function notifyChanged(deps: DomainDeps, kind: MediaKind, orgId: string): Promise<void> {
  if (kind === "moh" || deps.deployScheduler.copiesMedia?.()) {
    await notifyConfigChanged(deps, orgId);
  }
}
