// `pbxctl compliance purge`: the retention purge on demand over the server's store, one org at a
// time, with --dry-run and --org; a real purge leaves an audit record (actor cli).
import { mkdirSync, mkdtempSync, readdirSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import CompliancePurge, {
  type CompliancePurgeResult,
} from "../../src/cli/commands/compliance/purge.js";
import { setRetention } from "../../src/domain/compliance/retention.js";
import { openDataStore } from "../../src/domain/config/gitops.js";
import { insertOrg } from "../store/helpers.js";
import { runCommand } from "./run-command.js";
import { storePerTest } from "./test-store.js";

const A = "aaaaaaaa-1111-4000-8000-00000000000a";
const B = "bbbbbbbb-1111-4000-8000-00000000000b";
const DAY = 24 * 60 * 60 * 1000;

storePerTest(test);

test("purges what each org keeps too long, --dry-run counts, --org limits it to one org", async () => {
  const dataDir = mkdtempSync(join(tmpdir(), "pbx-purge-"));
  const recordings = join(dataDir, "recordings");
  const previous = process.env.PBX_RECORDINGS_DIR;
  delete process.env.PBX_RECORDINGS_DIR;
  try {
    const seed = await openDataStore(process.env, dataDir, { create: true });
    await insertOrg(seed.db, A, "A");
    await insertOrg(seed.db, B, "B");
    await seed.db.updateTable("organizations").set({ slug: "org-a" }).where("id", "=", A).execute();
    for (const org of [A, B]) {
      await setRetention(seed.db, org, { recordings: 30 }, new Date());
      mkdirSync(join(recordings, org), { recursive: true });
      for (const [name, age] of [
        ["old.wav", 40],
        ["new.wav", 5],
      ] as const) {
        const file = join(recordings, org, name);
        writeFileSync(file, "RIFF");
        const when = new Date(Date.now() - age * DAY);
        utimesSync(file, when, when);
      }
    }
    await seed.db.destroy();

    const dry = await runCommand(CompliancePurge, ["--dry-run", "--data-dir", dataDir, "--json"]);
    assert.is(dry.code, 0, dry.stderr + String(dry.error));
    assert.equal(
      (dry.result as CompliancePurgeResult).reports.map((r) => [
        r.org_id,
        r.kinds.recordings.deleted,
      ]),
      [
        [A, 1],
        [B, 1],
      ],
    );
    assert.is(readdirSync(join(recordings, A)).length, 2, "a dry run deletes nothing");

    const one = await runCommand(CompliancePurge, ["--org", "org-a", "--data-dir", dataDir]);
    assert.is(one.code, 0, one.stderr + String(one.error));
    assert.match(one.stdout, `${A}: deleted recordings=1`);
    assert.equal(readdirSync(join(recordings, A)), ["new.wav"]);
    assert.is(readdirSync(join(recordings, B)).length, 2, "B untouched");

    const store = await openDataStore(process.env, dataDir, { create: false });
    try {
      const audit = await store.db
        .selectFrom("audit_log")
        .select(["org_id", "actor_kind", "action", "operation"])
        .execute();
      assert.equal(audit, [
        { org_id: A, actor_kind: "cli", action: "purge", operation: "pbxctl compliance purge" },
      ]);
    } finally {
      await store.db.destroy();
    }
  } finally {
    if (previous !== undefined) process.env.PBX_RECORDINGS_DIR = previous;
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test.run();
