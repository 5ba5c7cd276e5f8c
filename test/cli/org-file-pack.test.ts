// The cache's pack (org-file-pack.ts): what is written reads back, from bytes or from its file
// (whose body is read only for the entries asked for); another format or version, or a pack cut
// short, is no pack; and a change to one entry's bytes or row loses that entry only (a change in
// the index also the stat index, which no check covers row by row).
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import {
  DecodedPack,
  encodePack,
  encodeRecord,
  type PackEntry,
  type StatRow,
} from "../../src/cli/lib/org-file-pack.js";

const entry = (id: string, plain = true): PackEntry => ({
  lint: true,
  plain,
  keys: [id, `org_${id}_`, `slug-${id}`, [`4930${id}`], [`10.0.0.${id}`]],
  bytes: Buffer.from(JSON.stringify({ analysis: id, padding: "x".repeat(40) })),
});
const entries = new Map([
  ["hash-a", entry("1")],
  ["hash-b", entry("2", false)],
  ["hash-c", entry("3")],
]);
const files = new Map<string, StatRow>([
  ["a.yaml", [120, 1700000000000.5, 1700000000001.25, 42, "hash-a"]],
  ["c.yaml", [130, 1700000000002, 1700000000003, 43, "hash-c"]],
  ["gone.yaml", [1, 2, 3, 4, "hash-without-entry"]],
]);
const bytesOf = (e: PackEntry | undefined) => (e ? Buffer.from(e.bytes).toString() : undefined);

test("a pack reads back: every entry, its row's fields and the stat index", () => {
  const pack = DecodedPack.decode(encodePack("v1", entries, files), "v1");
  assert.ok(pack);
  assert.equal([...pack.hashes()], ["hash-a", "hash-b", "hash-c"]);
  for (const [hash, written] of entries) {
    const read = pack.entry(hash);
    assert.equal(
      { lint: read?.lint, plain: read?.plain, keys: read?.keys, bytes: bytesOf(read) },
      { ...written, bytes: bytesOf(written) },
      hash,
    );
  }
  assert.is(pack.entry("hash-unknown"), undefined);
  // A stat row whose text has no entry is not written.
  assert.equal([...pack.files], [...files].slice(0, 2));
});

test("another format or version, a pack cut short or not a pack: none", () => {
  const bytes = encodePack("v1", entries, files);
  assert.is(DecodedPack.decode(bytes, "v2"), null);
  assert.is(DecodedPack.decode(bytes.subarray(0, bytes.length - 10), "v1"), null);
  assert.is(DecodedPack.decode(bytes.subarray(0, 40), "v1"), null);
  assert.is(DecodedPack.decode(Buffer.from('{"format": 1, "entries": {"trunc'), "v1"), null);
  const head = bytes.subarray(0, bytes.indexOf(10)).toString();
  const otherFormat = Buffer.concat([
    Buffer.from(head.replace(/"format":\d+/, '"format":2')),
    bytes.subarray(bytes.indexOf(10)),
  ]);
  assert.is(DecodedPack.decode(otherFormat, "v1"), null);
});

test("one entry's bytes or row changed: that entry is lost, the others are kept", () => {
  const bytes = encodePack("v1", entries, files);
  const inBody = Buffer.from(bytes);
  const at = inBody.lastIndexOf('"analysis":"2"');
  inBody.write('"analysis":"9"', at);
  const changedBody = DecodedPack.decode(inBody, "v1");
  assert.ok(changedBody);
  assert.is(changedBody.entry("hash-b"), undefined, "the changed entry");
  assert.is(bytesOf(changedBody.entry("hash-a")), bytesOf(entries.get("hash-a")));
  assert.is(bytesOf(changedBody.entry("hash-c")), bytesOf(entries.get("hash-c")));
  // The index (entry lines, stat index) has a check of its own, which still holds.
  assert.ok(changedBody.intact);
  assert.is(changedBody.files.size, 2, "the stat index is kept");
  assert.equal(changedBody.flags("hash-b"), { lint: true, plain: false });

  // A key in the entries' row (what the checks across files compare) changed: the same.
  const inRow = Buffer.from(bytes);
  inRow.write('"slug-4"', inRow.indexOf('"slug-3"'));
  const changedRow = DecodedPack.decode(inRow, "v1");
  assert.ok(changedRow);
  assert.is(changedRow.entry("hash-c"), undefined);
  assert.is(changedRow.flags("hash-c"), undefined, "its flags are not trusted either");
  assert.ok(changedRow.entry("hash-a"));
  assert.equal(changedRow.keys("hash-a"), entries.get("hash-a")!.keys);
  assert.not.ok(changedRow.intact);
  assert.is(changedRow.files.size, 0, "the stat index is dropped");
});

test("a pack file reads as its bytes do; an entry's bytes are read when asked for", () => {
  const dir = mkdtempSync(join(tmpdir(), "pbxctl-pack-"));
  try {
    const file = join(dir, "analyses.pack");
    const record = encodeRecord(new Map([["hash-d", entry("4")]]), new Map());
    writeFileSync(file, Buffer.concat([encodePack("v1", entries, files), record]));
    const pack = DecodedPack.open(file, "v1");
    assert.ok(pack);
    assert.equal([...pack.hashes()], ["hash-a", "hash-b", "hash-c", "hash-d"]);
    assert.equal([...pack.files], [...files].slice(0, 2));
    assert.equal(pack.flags("hash-a"), { lint: true, plain: true });
    assert.equal(pack.keys("hash-c"), entries.get("hash-c")!.keys);
    // The file changed after the pack was read (another run wrote it anew): the bytes read
    // now do not pass the entry's check, and the entry is a missing one.
    writeFileSync(file, Buffer.from(JSON.stringify({ padding: "y".repeat(4000) })));
    assert.is(pack.entry("hash-b"), undefined);
    assert.is(
      bytesOf(pack.entry("hash-d")),
      bytesOf(entry("4")),
      "appended: read with the records",
    );
    assert.is(DecodedPack.open(join(dir, "missing.pack"), "v1"), null);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("appended records: a new entry, a replaced one and stat rows changed or dropped read back", () => {
  const base = encodePack("v1", entries, files);
  const record = encodeRecord(
    new Map([
      ["hash-d", entry("4")],
      ["hash-a", entry("5", false)],
    ]),
    new Map<string, StatRow | null>([
      ["d.yaml", [140, 1, 2, 44, "hash-d"]],
      ["c.yaml", null],
    ]),
  );
  const later = encodeRecord(new Map(), new Map([["a.yaml", [121, 5, 6, 42, "hash-a"]]]));
  const pack = DecodedPack.decode(Buffer.concat([base, record, later]), "v1");
  assert.ok(pack);
  assert.equal(pack.appended.records, 2);
  assert.ok(pack.appended.sound);
  assert.equal([...pack.hashes()].sort(), ["hash-a", "hash-b", "hash-c", "hash-d"]);
  assert.is(bytesOf(pack.entry("hash-d")), bytesOf(entry("4")));
  assert.is(bytesOf(pack.entry("hash-a")), bytesOf(entry("5")), "the later row of a hash wins");
  assert.is(pack.entry("hash-a")?.plain, false);
  assert.is(bytesOf(pack.entry("hash-b")), bytesOf(entries.get("hash-b")));
  assert.equal(Object.fromEntries(pack.files), {
    "a.yaml": [121, 5, 6, 42, "hash-a"],
    "d.yaml": [140, 1, 2, 44, "hash-d"],
  });
});

test("a torn or changed record ends the records there; what came before is kept", () => {
  const base = encodePack("v1", entries, files);
  const first = encodeRecord(new Map([["hash-d", entry("4")]]), new Map());
  const second = encodeRecord(new Map([["hash-e", entry("5")]]), new Map());
  const torn = DecodedPack.decode(
    Buffer.concat([base, first, second.subarray(0, second.length - 3)]),
    "v1",
  );
  assert.ok(torn);
  assert.not.ok(torn.appended.sound);
  assert.ok(torn.entry("hash-d"));
  assert.is(torn.entry("hash-e"), undefined);
  assert.ok(torn.entry("hash-a"));

  const flipped = Buffer.concat([base, first, second]);
  const at = flipped.lastIndexOf('"analysis":"5"');
  flipped.write('"analysis":"6"', at);
  const changed = DecodedPack.decode(flipped, "v1");
  assert.ok(changed);
  assert.not.ok(changed.appended.sound);
  assert.is(changed.entry("hash-e"), undefined);
  assert.ok(changed.entry("hash-d"));
});

test.run();
