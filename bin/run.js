#!/usr/bin/env node
// Thin oclif entry: commands are compiled to dist/cli/commands by `npm run build` (run by `prepare`).
import { execute } from "../dist/vendor/oclif-core.js";

await execute({ dir: import.meta.url });
