// A warm eSpeak NG: the `espeak-ng` package is the espeak-ng command line program compiled to
// WebAssembly (only `main` is exported, voice data embedded in the .wasm). Creating an instance
// costs ~100 ms (32 MB memory, 18 MB of data segments), synthesizing a sentence ~20 ms. So the
// module is compiled and instantiated once, its memory is snapshotted right after start-up, and
// every run restores that snapshot before calling `main` again: each run starts from the state
// of a fresh process (getopt's `optind`, malloc's heap, espeak's globals) without paying for
// one. Memory cannot grow in this build (fixed 32 MB), so the snapshot always covers all of it.
import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import type { EspeakModule, WasmInstance, WasmModule } from "espeak-ng";
import { TtsEngineError } from "./errors.js";

interface EspeakExports {
  __main_argc_argv(argc: number, argv: number): number;
  stackSave(): number;
  stackRestore(pointer: number): void;
  stackAlloc(bytes: number): number;
}

export interface EspeakRunResult {
  status: number;
  stdout: string[];
  stderr: string[];
}

// Node's global WebAssembly, typed narrowly (no DOM lib in this project).
const wasmApi = (
  globalThis as unknown as {
    WebAssembly: {
      compile(bytes: Uint8Array): Promise<WasmModule>;
      instantiate(module: WasmModule, imports: Record<string, unknown>): Promise<WasmInstance>;
    };
  }
).WebAssembly;

let compiled: Promise<WasmModule> | undefined;

function compileOnce(): Promise<WasmModule> {
  if (!compiled) {
    const require = createRequire(import.meta.url);
    const wasmPath = join(dirname(require.resolve("espeak-ng")), "espeak-ng.wasm");
    compiled = readFile(wasmPath).then((bytes) => wasmApi.compile(bytes));
    compiled.catch(() => {
      compiled = undefined;
    });
  }
  return compiled;
}

/** What `time()` and `gettimeofday()` read inside the instance: a fixed instant (2024-01-01). */
const FIXED_WALL_CLOCK_MS = 1_704_067_200_000;

// eSpeak NG seeds its voice's random variation from the wall clock, so the same text spoken in
// two different seconds gave different samples (same length, different noise). A greeting must
// be a function of its text and voice alone: the instance sees one fixed wall-clock instant.
// The monotonic clock (`emscripten_get_now`) is left alone.
function withFixedWallClock(imports: Record<string, unknown>): Record<string, unknown> {
  const env = imports.env as Record<string, unknown> | undefined;
  if (!env || typeof env.emscripten_date_now !== "function") return imports;
  return { ...imports, env: { ...env, emscripten_date_now: () => FIXED_WALL_CLOCK_MS } };
}

class ExitCalled {
  constructor(readonly status: number) {}
}

/** One warm eSpeak NG instance; `run` is synchronous and starts from a fresh-process state. */
export class EspeakRuntime {
  private stdout: string[] = [];
  private stderr: string[] = [];
  private module!: EspeakModule;
  private exports!: EspeakExports;
  private snapshot!: Uint8Array;
  private stackPointer = 0;
  private broken = false;

  private constructor() {}

  /** Compiles (once per process) and starts an instance, ready for `run`. */
  static async start(): Promise<EspeakRuntime> {
    // Loaded here, not at the top: importing src/tts must stay cheap for `pbxctl --help` and
    // for a server whose engine is Google.
    const { default: createEspeakModule } = await import("espeak-ng");
    const wasm = await compileOnce();
    const runtime = new EspeakRuntime();
    let exports: EspeakExports | undefined;
    // A failed instantiation would otherwise leave the module's ready promise pending forever.
    let failInstantiation: (error: unknown) => void = () => {};
    const instantiationFailed = new Promise<never>((_, reject) => {
      failInstantiation = reject;
    });
    const ready = createEspeakModule({
      noInitialRun: true,
      print: (line) => runtime.stdout.push(line),
      printErr: (line) => runtime.stderr.push(line),
      // The default writes process.exitCode; an exit() inside espeak must only end the run.
      quit: (status) => {
        throw new ExitCalled(status);
      },
      instantiateWasm(imports, receive) {
        wasmApi.instantiate(wasm, withFixedWallClock(imports)).then((instance) => {
          exports = instance.exports as unknown as EspeakExports;
          receive(instance, wasm);
        }, failInstantiation);
        return {};
      },
    });
    runtime.module = await Promise.race([ready, instantiationFailed]);
    if (!exports) throw new TtsEngineError("eSpeak NG did not expose its exports");
    runtime.exports = exports;
    runtime.snapshot = runtime.module.HEAPU8.slice();
    runtime.stackPointer = exports.stackSave();
    return runtime;
  }

  /** Whether a run aborted (a WASM trap): the instance must then be replaced. */
  get isBroken(): boolean {
    return this.broken;
  }

  /** Writes a file into the instance's in-memory file system (e.g. the text to speak). */
  writeFile(path: string, data: string | Uint8Array): void {
    this.module.FS.writeFile(path, data);
  }

  /** Reads and deletes a file the last run wrote; undefined when it does not exist. */
  takeFile(path: string): Uint8Array | undefined {
    const fs = this.module.FS;
    if (!fs.analyzePath(path).exists) return undefined;
    const bytes = fs.readFile(path);
    fs.unlink(path);
    return bytes;
  }

  /** Runs `espeak-ng <args>` to completion; throws `TtsEngineError` if the instance traps. */
  run(args: readonly string[]): EspeakRunResult {
    if (this.broken) throw new TtsEngineError("eSpeak NG instance is no longer usable");
    const heap = this.module.HEAPU8;
    heap.set(this.snapshot);
    this.exports.stackRestore(this.stackPointer);
    this.stdout = [];
    this.stderr = [];
    let status: number;
    try {
      status = this.exports.__main_argc_argv(
        args.length + 1,
        this.writeArgv(["espeak-ng", ...args]),
      );
    } catch (error) {
      if (!(error instanceof ExitCalled)) {
        this.broken = true;
        throw new TtsEngineError(`eSpeak NG aborted: ${String(error)}`);
      }
      status = error.status;
    } finally {
      this.exports.stackRestore(this.stackPointer);
      this.closeStrayFiles();
    }
    return { status, stdout: this.stdout, stderr: this.stderr };
  }

  private writeArgv(argv: readonly string[]): number {
    const encoder = new TextEncoder();
    const pointers = argv.map((arg) => {
      const bytes = encoder.encode(`${arg}\0`);
      const pointer = this.exports.stackAlloc(bytes.length);
      this.module.HEAPU8.set(bytes, pointer);
      return pointer;
    });
    const table = this.exports.stackAlloc((argv.length + 1) * 4);
    const heap32 = this.module.HEAPU32;
    pointers.forEach((pointer, i) => {
      heap32[(table >> 2) + i] = pointer;
    });
    heap32[(table >> 2) + argv.length] = 0;
    return table;
  }

  // Restoring memory makes the C side forget files it left open; close them on the JS side
  // too, or the file system's descriptor table would fill up over thousands of runs.
  private closeStrayFiles(): void {
    const fs = this.module.FS;
    for (const stream of fs.streams) {
      if (stream && stream.fd > 2) fs.close(stream);
    }
  }
}
