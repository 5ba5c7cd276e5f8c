import { mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { compileAll } from "../../src/compiler/index.js";
import { CompileRefused, compileToDirectory } from "../../src/deploy/compile-to-directory.js";
import { TreeWriter } from "../../src/deploy/tree-writer.js";
import type { OrgState } from "../../src/model/org-state.js";
import { makeState } from "../model/org-fixture.js";

const GATEWAY = { environment: "prod", staging_endpoint: "staging-tunnel" } as const;

async function tempDir(): Promise<string> {
  return mkdtemp(join(tmpdir(), "pbx-compile-dir-"));
}

async function treeOf(dir: string): Promise<Map<string, string>> {
  const tree = new Map<string, string>();
  for (const entry of await readdir(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const full = join(entry.parentPath, entry.name);
    tree.set(full.slice(dir.length + 1), await readFile(full, "utf8"));
  }
  return tree;
}

function twoOrgs(): OrgState[] {
  const second = makeState((data) => {
    data.org = { id: "22222222-3333-4444-8555-666666666666", name: "Globex" };
    data.dids = [{ number: "+918065978002", is_default: true }];
  });
  return [makeState(), second];
}

test("TreeWriter: every file lands whole, even with almost nothing allowed in flight", async () => {
  const dir = await tempDir();
  try {
    const writer = new TreeWriter(dir, { maxBytesInFlight: 8 });
    const expected = new Map<string, string>();
    for (let i = 0; i < 40; i++) {
      const path = `orgs/o${i % 5}/file${i}.conf`;
      const content = `exten => ${i},1,NoOp(${"x".repeat(i * 50)})\n`;
      expected.set(path, content);
      assert.is(await writer.write(path, content), Buffer.byteLength(content));
    }
    await writer.close();
    assert.equal(await treeOf(dir), expected);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test("TreeWriter: a failed write is reported, not lost", async () => {
  const dir = await tempDir();
  try {
    await writeFile(join(dir, "blocker"), "a file where a directory is needed");
    const writer = new TreeWriter(dir);
    let failed = false;
    try {
      await writer.write("ok.conf", "fine\n");
      await writer.write("blocker/inside.conf", "cannot land\n");
      await writer.close();
    } catch {
      failed = true;
    }
    assert.ok(failed, "the failure surfaced from write() or close()");
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test("compileToDirectory writes exactly what compileAll compiles, byte for byte", async () => {
  const dir = await tempDir();
  try {
    const orgs = twoOrgs();
    const result = await compileToDirectory(orgs, GATEWAY, dir);
    const expected = compileAll(orgs, GATEWAY);
    assert.equal(
      result.files.map((f) => f.path),
      expected.files.map((f) => f.path),
    );
    assert.equal(await treeOf(dir), new Map(expected.files.map((f) => [f.path, f.content])));
    for (const file of result.files) {
      const content = expected.files.find((f) => f.path === file.path)!.content;
      assert.is(file.bytes, Buffer.byteLength(content), file.path);
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test("compileToDirectory reports every compiler refusal and writes no further file", async () => {
  const dir = await tempDir();
  try {
    const [first, second] = twoOrgs();
    // Validation would catch these; the compiler must refuse them anyway.
    for (const org of [first!, second!]) {
      org.outbound_routes.push({
        id: "33333333-4444-4555-8666-777777777777",
        name: "nowhere",
        patterns: ["_9X."],
        trunk: "missing",
        strip_digits: 0,
        prepend_digits: "",
        caller_id_override: null,
      });
    }
    let refusal: unknown;
    try {
      await compileToDirectory([first!, second!], GATEWAY, dir);
    } catch (error) {
      refusal = error;
    }
    assert.instance(refusal, CompileRefused);
    const errors = (refusal as CompileRefused).errors;
    assert.is(errors.length, 2, "both orgs' problems are reported");
    assert.match(errors[0]!.message, /no trunk named missing/);
    assert.equal([...(await treeOf(dir)).keys()], [], "nothing written after the first refusal");
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test.run();
