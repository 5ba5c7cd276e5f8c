// Custom greetings and music-on-hold files of an org: uploaded WAV audio is converted to what the
// engine plays natively (8 kHz, 16-bit, mono PCM) and kept under
// `<sounds>/custom/<org_id>/<name>.wav` (played as `custom/<org_id>/<name>`) and
// `<sounds>/moh/<org_id>/<name>.wav` (the org's music-on-hold directory).
// File names are either chosen by the server or held to `^[a-z0-9_-]{1,64}$`, and the directory
// comes from the org id of the credential, so nothing in a request can name a path outside it.
import { randomBytes } from "node:crypto";
import { mkdir, open, readFile, rename, rm, stat, unlink } from "node:fs/promises";
import { join } from "node:path";
import wavefilePackage from "wavefile";
import { wavNamesIn } from "../deploy/moh-files.js";
import { MEDIA_FILE_NAME } from "../model/org-state.js";
import { resample, TELEPHONY_SAMPLE_RATE } from "../tts/resample.js";
import { encodeWav, parseWav } from "../tts/wav.js";
import type { DomainDeps } from "./deps.js";
import { BadRequest, NotFound } from "./errors.js";

const { WaveFile } = wavefilePackage;

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

export interface MediaFileView {
  name: string;
  /** What the dialplan plays (`custom/<org_id>/<name>`), relative to the sounds directory. */
  sound: string;
  size: number;
  sample_rate: number;
  duration_seconds: number;
  updated_at: string;
}

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

const DECODABLE_FORMATS: Record<number, string> = {
  1: "PCM",
  3: "IEEE float",
  6: "A-law",
  7: "mu-law",
  65534: "extensible",
};

/** Samples of `bytes` as one 16-bit channel (channels averaged) at the file's own rate. */
function decodeMono16(bytes: Uint8Array): { pcm: Int16Array; sampleRate: number } {
  let info: ReturnType<typeof parseWav>;
  try {
    info = parseWav(bytes);
  } catch (error) {
    throw new BadRequest(`Upload a WAV file: ${(error as Error).message}`);
  }
  if (info.sampleRate < 1000 || info.sampleRate > 192000 || info.channels < 1) {
    throw new BadRequest(`Unsupported WAV: ${info.channels} channels at ${info.sampleRate} Hz`);
  }
  if (info.audioFormat === 1 && info.bitsPerSample === 16 && info.channels === 1) {
    return { pcm: info.pcm, sampleRate: info.sampleRate };
  }
  if (DECODABLE_FORMATS[info.audioFormat] === undefined) {
    throw new BadRequest(
      `Unsupported WAV encoding (format ${info.audioFormat}): use PCM, IEEE float, A-law or mu-law`,
    );
  }
  // Other encodings and multi-channel files: wavefile decodes them to 16-bit samples.
  try {
    const wav = new WaveFile(bytes);
    if (info.audioFormat === 7) wav.fromMuLaw();
    else if (info.audioFormat === 6) wav.fromALaw();
    else if (info.bitsPerSample !== 16) wav.toBitDepth("16");
    const samples = wav.getSamples(false, Int16Array) as unknown as Int16Array | Int16Array[];
    return { pcm: mixDown(samples), sampleRate: info.sampleRate };
  } catch (error) {
    if (error instanceof BadRequest) throw error;
    throw new BadRequest(`Could not decode the WAV file: ${(error as Error).message}`);
  }
}

function mixDown(samples: Int16Array | Int16Array[]): Int16Array {
  if (!Array.isArray(samples)) return samples;
  const [first] = samples;
  if (!first) return new Int16Array(0);
  if (samples.length === 1) return first;
  const mono = new Int16Array(first.length);
  for (let i = 0; i < mono.length; i++) {
    let sum = 0;
    for (const channel of samples) sum += channel[i] ?? 0;
    mono[i] = Math.round(sum / samples.length);
  }
  return mono;
}

/** Any supported WAV as an 8 kHz, 16-bit, mono PCM WAV (Asterisk's native slin). */
export function toTelephonyWav(bytes: Uint8Array): Uint8Array {
  const audio = decodeMono16(bytes);
  if (audio.pcm.length === 0) throw new BadRequest("The WAV file holds no audio");
  const converted = resample(audio, TELEPHONY_SAMPLE_RATE);
  return encodeWav(converted.pcm, TELEPHONY_SAMPLE_RATE);
}

async function writeAtomically(directory: string, file: string, bytes: Uint8Array): Promise<void> {
  await mkdir(directory, { recursive: true });
  const temporary = join(directory, `.${file}.${randomBytes(6).toString("hex")}.tmp`);
  try {
    const handle = await open(temporary, "wx", 0o644);
    try {
      await handle.writeFile(bytes);
      await handle.sync();
    } finally {
      await handle.close();
    }
    // A call playing the old file keeps it open; the rename never shows a half-written one.
    await rename(temporary, join(directory, file));
  } catch (error) {
    await rm(temporary, { force: true });
    throw error;
  }
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
  const wav = toTelephonyWav(input.audio);
  const directory = mediaDir(deps.config.soundsDir, kind, orgId);
  await writeAtomically(directory, `${name}.wav`, wav);
  notifyChanged(deps, kind, orgId);
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
  notifyChanged(deps, kind, orgId);
}

/**
 * The org's music class lists its files (and exists only while there are some), so a change to
 * them is a configuration change: deploy the org. Greetings are played by name and need none.
 */
function notifyChanged(deps: DomainDeps, kind: MediaKind, orgId: string): void {
  if (kind === "moh") deps.deployScheduler.scheduleDeploy(orgId);
}
