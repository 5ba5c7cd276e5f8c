// Writes oclif.manifest.json after `tsc` so that `pbxctl --help` and every command start without
// importing all command modules (oclif builds the manifest on each run when the file is missing;
// TARGETS.md wants `pbxctl --help` under 300 ms). Uses oclif's own Config, so the manifest is
// exactly what oclif would have computed.
import { rmSync, writeFileSync } from "node:fs";
import { Config } from "@oclif/core";

const root = new URL("..", import.meta.url).pathname;
const manifestUrl = new URL("../oclif.manifest.json", import.meta.url);
// oclif reads an existing manifest even with ignoreManifest; a stale one would hide new commands.
rmSync(manifestUrl, { force: true });
const config = await Config.load({ root, ignoreManifest: true });
const plugin = config.getPluginsList().find((p) => p.root === config.root);
if (!plugin) throw new Error("the root plugin was not found");
writeFileSync(manifestUrl, `${JSON.stringify(plugin.manifest, null, 2)}\n`);
console.log(`oclif.manifest.json: ${Object.keys(plugin.manifest.commands).length} commands`);
