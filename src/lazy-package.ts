// A CommonJS package loaded the first time it is used rather than when the module naming it is.
// `pbxctl serve` imports nearly every module (every route's handler and what it calls), so a
// package only some requests, stores or engines need (pg on a SQLite store, wavefile for audio
// uploads, asterisk-manager without an AMI engine) would otherwise be loaded, parsed and run
// before the server listens (docs/performance.md, start-up). CommonJS packages can be required
// synchronously, so callers stay synchronous.
import { createRequire } from "node:module";

const require = createRequire(import.meta.url);

/**
 * A getter of `specifier`'s exports (what `import x from` gives for a CommonJS package), loading
 * it on the first call. `T` is the caller's `typeof` of its type-only import.
 */
export function packageOnFirstUse<T>(specifier: string): () => T {
  let loaded: T | undefined;
  return () => {
    loaded ??= require(specifier) as T;
    return loaded;
  };
}
