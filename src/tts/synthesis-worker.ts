// Worker-thread entry of `WorkerSpeechEngine`: owns a warm eSpeak NG and answers one chunk per
// message with 8 kHz PCM, so that neither synthesis nor resampling runs on the caller's thread.
import { parentPort } from "node:worker_threads";
import { TtsInputError } from "./errors.js";
import { EspeakEngine } from "./espeak-engine.js";
import { resample } from "./resample.js";

export type WorkerRequest =
  | { id: number; kind: "warm" }
  | { id: number; kind: "synthesize"; text: string; language: string; voice: string };

export type WorkerResponse =
  | { id: number; ok: true; pcm?: Int16Array; sampleRate?: number }
  | { id: number; ok: false; errorName: string; message: string; input: boolean };

const port = parentPort;
if (!port) throw new Error("synthesis-worker must run in a worker thread");
const engine = new EspeakEngine();

port.on("message", async (request: WorkerRequest) => {
  try {
    if (request.kind === "warm") {
      await engine.warm();
      port.postMessage({ id: request.id, ok: true } satisfies WorkerResponse);
      return;
    }
    const audio = resample(await engine.synthesize(request.text, request.language, request.voice));
    // Transfer, not copy; a view into a larger buffer is copied first so only it moves.
    const whole =
      audio.pcm.byteOffset === 0 && audio.pcm.byteLength === audio.pcm.buffer.byteLength
        ? audio.pcm
        : audio.pcm.slice();
    const response: WorkerResponse = {
      id: request.id,
      ok: true,
      pcm: whole,
      sampleRate: audio.sampleRate,
    };
    port.postMessage(response, [whole.buffer as ArrayBuffer]);
  } catch (error) {
    const failure = error instanceof Error ? error : new Error(String(error));
    const response: WorkerResponse = {
      id: request.id,
      ok: false,
      errorName: failure.name,
      message: failure.message,
      input: failure instanceof TtsInputError,
    };
    port.postMessage(response);
  }
});
