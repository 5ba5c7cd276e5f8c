#!/usr/bin/env node
// Thin oclif entry: commands are compiled to dist/cli/commands by `npm run build` (run by `prepare`).
import { setFlagsFromString } from "node:v8";

// A command runs for a second or two, and V8's default tier-up budget has it optimize (TurboFan,
// on background threads) many functions that then run only briefly: in a cold `validate` of 1,000
// files, with a load worker beside this thread, that compile work took the two cores from the
// parse. Four times the budget optimizes the code that is hot: about 6% less CPU and wall time
// there, the same elsewhere (docs/gitops.md, issue 30 part h). Read by V8 whenever it sets a
// function's budget, so setting it before anything runs is safe; worker threads inherit it.
// `serve` runs for days and keeps V8's default.
if (!process.argv.slice(2).includes("serve")) setFlagsFromString("--interrupt-budget=270336");

const { execute } = await import("../dist/vendor/oclif-core.js");
await execute({ dir: import.meta.url });
