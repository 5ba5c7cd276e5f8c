// Runs the embedded engine in a worker thread. Synthesis is synchronous WASM work (~20 ms per
// sentence) plus resampling; a greeting has no length cap, so on the server's thread it would
// stall every other request for as long as the text is long.
import { extname } from "node:path";
import { fileURLToPath } from "node:url";
import type { Worker } from "node:worker_threads";
import { startModuleWorker } from "../module-worker.js";
import type { PcmAudio, SpeechEngine } from "./engine.js";
import { TtsEngineError, TtsInputError } from "./errors.js";
import type { WorkerRequest, WorkerResponse } from "./synthesis-worker.js";

interface Pending {
  worker: Worker;
  resolve(response: WorkerResponse & { ok: true }): void;
  reject(error: Error): void;
}

// Through the parent directory, not `./`: in the build this module is also inside the serve
// bundle (dist/api/serve-modules.js, scripts/bundle-serve.mjs), one directory beside dist/tts.
const WORKER_URL = new URL(
  `../tts/synthesis-worker${extname(fileURLToPath(import.meta.url))}`,
  import.meta.url,
);

function startWorker(): Worker {
  return startModuleWorker(WORKER_URL);
}

export interface WorkerEngineOptions {
  /**
   * Stop the worker after this long without work (default 120,000 ms; 0 = never). A warm
   * worker holds ~100 MB (WASM memory, its snapshot, the compiled module); the next request
   * pays the cold start again (~0.5 s).
   */
  idleMs?: number;
  /** Called when the worker was stopped for being idle (observability, tests). */
  onIdleStop?: () => void;
}

/** eSpeak NG in one lazily started worker thread; answers are already 8 kHz PCM. */
export class WorkerSpeechEngine implements SpeechEngine {
  readonly name = "espeak (worker)";
  private worker: Worker | undefined;
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;
  private idleTimer: NodeJS.Timeout | undefined;
  private readonly idleMs: number;

  constructor(private readonly options: WorkerEngineOptions = {}) {
    this.idleMs = options.idleMs ?? 120_000;
  }

  /** Whether a worker thread is currently running. */
  get isRunning(): boolean {
    return this.worker !== undefined;
  }

  /** Starts the worker and its WASM instance now (cold start off the request path). */
  async warm(): Promise<void> {
    await this.request({ id: 0, kind: "warm" });
  }

  async synthesize(text: string, language: string, voice: string): Promise<PcmAudio> {
    const response = await this.request({ id: 0, kind: "synthesize", text, language, voice });
    if (!response.pcm || !response.sampleRate) {
      throw new TtsEngineError("speech worker answered without audio");
    }
    return { pcm: response.pcm, sampleRate: response.sampleRate };
  }

  async close(): Promise<void> {
    clearTimeout(this.idleTimer);
    const worker = this.worker;
    this.worker = undefined;
    if (worker) await worker.terminate();
  }

  private request(message: WorkerRequest): Promise<WorkerResponse & { ok: true }> {
    clearTimeout(this.idleTimer);
    const worker = this.ensureWorker();
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { worker, resolve, reject });
      worker.ref(); // keep the process alive while an answer is owed
      worker.postMessage({ ...message, id });
    });
  }

  private ensureWorker(): Worker {
    if (this.worker) return this.worker;
    const worker = startWorker();
    worker.unref();
    worker.on("message", (response: WorkerResponse) => {
      const pending = this.pending.get(response.id);
      if (!pending) return;
      this.pending.delete(response.id);
      if (![...this.pending.values()].some((p) => p.worker === worker)) {
        worker.unref();
        this.scheduleIdleStop(worker);
      }
      if (response.ok) pending.resolve(response);
      else {
        const ErrorClass = response.input ? TtsInputError : TtsEngineError;
        pending.reject(new ErrorClass(response.message));
      }
    });
    const fail = (error: Error) => {
      if (this.worker === worker) this.worker = undefined;
      for (const [id, pending] of this.pending) {
        if (pending.worker !== worker) continue;
        this.pending.delete(id);
        pending.reject(error);
      }
    };
    worker.on("error", (error) =>
      fail(new TtsEngineError(`speech worker failed: ${error.message}`)),
    );
    worker.on("exit", (code) => fail(new TtsEngineError(`speech worker exited (code ${code})`)));
    this.worker = worker;
    return worker;
  }

  private scheduleIdleStop(worker: Worker): void {
    if (this.idleMs <= 0 || !Number.isFinite(this.idleMs)) return;
    clearTimeout(this.idleTimer);
    this.idleTimer = setTimeout(() => {
      if (this.worker !== worker || this.pending.size > 0) return;
      this.worker = undefined;
      void worker.terminate().then(() => this.options.onIdleStop?.());
    }, this.idleMs);
    this.idleTimer.unref();
  }
}
