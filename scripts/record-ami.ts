// Records every AMI answer the fast suite's fake engine replays, again, from the real Asterisk 22
// at PBX_ASTERISK_PREFIX: runs the engine suites that write fixtures/ami/*.json (and the trunk
// registrations the fake lists) with UPDATE_GOLDEN=1, then shows what changed for review.
// Run: PBX_ASTERISK_PREFIX=/opt/pbx-asterisk/asterisk npm run record:ami
import { spawnSync } from "node:child_process";

const root = new URL("..", import.meta.url).pathname;
/** The engine suites that record, and the file each writes. */
const RECORDERS = {
  "test/engine/ami-session": "fixtures/ami/session.json",
  "test/engine/ami-target": "fixtures/ami/asterisk-22.json",
  "test/engine/call-control": "fixtures/ami/call-control.json",
  "test/engine/realtime-api": "fixtures/ami/pjsip-realtime.json",
  "test/engine/trunk-webhooks": "fixtures/registrations/trunk-registrations.json",
};

const run = spawnSync(
  process.execPath,
  ["--import", "tsx", "scripts/test.ts", "--engine", ...Object.keys(RECORDERS)],
  { cwd: root, stdio: "inherit", env: { ...process.env, UPDATE_GOLDEN: "1" } },
);
spawnSync("git", ["diff", "--stat", "--", ...Object.values(RECORDERS)], {
  cwd: root,
  stdio: "inherit",
});
console.log("Review `git diff fixtures/ami fixtures/registrations` before committing.");
process.exit(run.status ?? 1);
