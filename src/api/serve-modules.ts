// Everything `pbxctl serve` loads before it listens, behind one module. `npm run build` replaces
// this module's tsc output (dist/api/serve-modules.js) with one esbuild bundle of it and of the
// packages it reaches (scripts/bundle-serve.mjs): loading ~1,600 separate ESM and CommonJS files
// (kysely and TypeBox alone are ~500) was most of the start-up's CPU, and one file compiles in a
// fraction of it. Under tsx (tests, development) it is this plain re-export.
//
// The serve command imports only from here, so the error classes it tests with `instanceof` are
// the very ones the bundled server throws.
export { pino } from "pino";
export { loadConfig } from "../config.js";
export { EngineConfigError } from "../engine/index.js";
export { StoreBehindError } from "../store/database.js";
export { startServer } from "./server.js";
