// The part of the Emscripten module of `espeak-ng` (dist/espeak-ng.js) that src/tts uses.
// The project compiles without the DOM lib, so the few WebAssembly shapes involved are named here.
declare module "espeak-ng" {
  /** A compiled WebAssembly module (opaque). */
  export interface WasmModule {
    readonly __wasmModule?: never;
  }

  export interface WasmInstance {
    exports: Record<string, unknown>;
  }

  export interface EspeakFs {
    writeFile(path: string, data: string | Uint8Array): void;
    readFile(path: string): Uint8Array;
    unlink(path: string): void;
    analyzePath(path: string): { exists: boolean };
    streams: Array<{ fd: number } | null | undefined>;
    close(stream: { fd: number }): void;
  }

  export interface EspeakModule {
    FS: EspeakFs;
    HEAPU8: Uint8Array;
    HEAPU32: Uint32Array;
  }

  export interface EspeakModuleOptions {
    arguments?: string[];
    noInitialRun?: boolean;
    print?: (line: string) => void;
    printErr?: (line: string) => void;
    quit?: (status: number, toThrow: unknown) => never;
    instantiateWasm?: (
      imports: Record<string, unknown>,
      receive: (instance: WasmInstance, module: WasmModule) => void,
    ) => Record<string, never>;
  }

  const createEspeakModule: (options?: EspeakModuleOptions) => Promise<EspeakModule>;
  export default createEspeakModule;
}
