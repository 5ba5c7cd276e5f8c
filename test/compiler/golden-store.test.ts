// The golden trees' storage (golden-store.ts) on throwaway trees: an output two trees share is
// stored once and read back whole, packing twice changes nothing, a changed output accepted from
// `<tree>.new/` leaves no orphan shared file, and a missing shared file fails loudly.
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import {
  acceptNewTrees,
  contentKey,
  goldenTree,
  packTrees,
  readManifest,
  readTree,
  unpackedDuplicates,
  unreferencedShared,
  writePlainTree,
} from "./golden-store.js";

function fixtureDir() {
  const root = mkdtempSync(join(tmpdir(), "golden-store-"));
  const shared = join(root, "shared");
  const a = goldenTree(join(root, "case-a"), "expected");
  const b = goldenTree(join(root, "case-b"), "expected");
  return { root, shared, a, b };
}

const GATEWAY = "[gateway]\nexten => _X.,1,Goto(${EXTEN})\n";

test("an output two trees share is stored once and read back whole", () => {
  const { root, shared, a, b } = fixtureDir();
  try {
    writePlainTree(
      a.dir,
      new Map([
        ["extensions.conf", GATEWAY],
        ["orgs/a.conf", "a\n"],
      ]),
    );
    writePlainTree(
      b.dir,
      new Map([
        ["extensions.conf", GATEWAY],
        ["orgs/b.conf", "b\n"],
      ]),
    );
    assert.equal(unpackedDuplicates([a, b], shared).length, 1, "before: stored twice");

    assert.equal(packTrees([a, b], shared), { shared: 1, plain: 2 });
    assert.equal(readdirSync(shared), [contentKey(GATEWAY)]);
    assert.equal(readManifest(a.manifest), new Map([["extensions.conf", contentKey(GATEWAY)]]));
    assert.not.ok(existsSync(join(a.dir, "extensions.conf")), "no plain copy left");
    assert.equal(
      readTree(a, shared),
      new Map([
        ["extensions.conf", GATEWAY],
        ["orgs/a.conf", "a\n"],
      ]),
    );
    assert.equal(unpackedDuplicates([a, b], shared), []);
    assert.equal(unreferencedShared([a, b], shared), []);

    const before = readTree(b, shared);
    packTrees([a, b], shared);
    assert.equal(readTree(b, shared), before, "packing twice changes nothing");
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test("an accepted new output replaces the tree; a shared file nobody uses any more goes", () => {
  const { root, shared, a, b } = fixtureDir();
  try {
    writePlainTree(a.dir, new Map([["extensions.conf", GATEWAY]]));
    writePlainTree(b.dir, new Map([["extensions.conf", GATEWAY]]));
    packTrees([a, b], shared);
    const changed = `${GATEWAY}; changed\n`;
    writePlainTree(`${a.dir}.new`, new Map([["extensions.conf", changed]]));
    writePlainTree(`${b.dir}.new`, new Map([["extensions.conf", changed]]));

    assert.equal(acceptNewTrees([a, b]), [a, b]);
    assert.not.ok(existsSync(`${a.dir}.new`));
    packTrees([a, b], shared);
    assert.equal(readdirSync(shared), [contentKey(changed)], "the old shared file is gone");
    assert.is(readTree(a, shared).get("extensions.conf"), changed);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test("a shared file edited by hand fails loudly, and so does a missing one", () => {
  const { root, shared, a, b } = fixtureDir();
  try {
    writePlainTree(a.dir, new Map([["x.conf", GATEWAY]]));
    writePlainTree(b.dir, new Map([["x.conf", GATEWAY]]));
    packTrees([a, b], shared);
    writeFileSync(join(shared, contentKey(GATEWAY)), `${GATEWAY}; edited\n`);
    assert.throws(() => readTree(a, shared), /does not hold the bytes its name says/);
    rmSync(join(shared, contentKey(GATEWAY)));
    assert.throws(() => readTree(a, shared), /x\.conf: no shared file/);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test.run();
