// The media directories every replica must be able to use: a directory that works is "ok"; one
// that cannot be written (here: its path runs through a file, as when a mount is missing and a
// file sits where it should be) is reported with the error, and probes are remembered for a
// while so a load balancer polling /health does not touch the disk each time.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { mediaDirsProbe, probeMediaDir } from "../../src/media-check.js";

test("a usable directory is ok; one that cannot be written says why", async () => {
  const dir = mkdtempSync(join(tmpdir(), "pbx-media-"));
  try {
    writeFileSync(join(dir, "not-a-dir"), "x");
    assert.equal(await probeMediaDir(join(dir, "sounds")), { dir: join(dir, "sounds"), ok: true });
    const broken = await probeMediaDir(join(dir, "not-a-dir", "recordings"));
    assert.is(broken.ok, false);
    assert.is(broken.error, "ENOTDIR");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("the probe is remembered for maxAgeMs, then taken again", async () => {
  const dir = mkdtempSync(join(tmpdir(), "pbx-media-"));
  let now = 0;
  try {
    const probe = mediaDirsProbe(
      { sounds: join(dir, "sounds"), recordings: join(dir, "recordings") },
      () => now,
      5000,
    );
    assert.equal(await probe(), { sounds: "ok", recordings: "ok" });
    // The recordings "mount" goes away: a file where the directory was.
    rmSync(join(dir, "recordings"), { recursive: true });
    writeFileSync(join(dir, "recordings"), "x");
    now = 4999;
    assert.equal(await probe(), { sounds: "ok", recordings: "ok" }, "still the last probe");
    now = 5000;
    const after = await probe();
    assert.is(after.sounds, "ok");
    assert.ok(after.recordings !== "ok", `recordings: ${after.recordings}`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test.run();
