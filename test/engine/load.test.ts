// Every golden fixture and both example orgs load into a real Asterisk 22 under the top-level
// files of `pbxctl engine init` with no WARNING or ERROR line; and engine init alone (before any
// deploy) boots cleanly with every module pbxctl needs loaded.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { compileCase, listCases, loadCase } from "../compiler/golden.js";
import { exampleOrgFiles, fixtureFiles, fixtureSounds, withEngine } from "./helpers.js";

/** The warnings a clean load may still have: none. Printed whole when the list is not empty. */
function assertClean(problems: string[], what: string): void {
  assert.equal(problems, [], `${what} logged:\n${problems.join("\n")}`);
}

test("engine init alone: Asterisk boots with no WARNING/ERROR and loads what pbxctl needs", async () => {
  await withEngine([], async (engine) => {
    assertClean(engine.problems(), "a fresh engine init tree");
    const modules = await engine.cli("module show");
    for (const name of ["pbx_config.so", "app_queue.so", "chan_pjsip.so", "cdr_manager.so"]) {
      assert.match(modules, name, `${name} is loaded`);
    }
    for (const name of ["chan_iax2.so", "pbx_dundi.so", "chan_unistim.so", "func_shell.so"]) {
      assert.not.match(modules, name, `${name} must not be loaded`);
    }
    // Stock hold music: the class every queue and call uses while its org has no music.
    assert.match(await engine.cli("moh show classes"), "Class: default\n\tMode: files\n");
    const transports = await engine.cli("pjsip show transports");
    assert.match(transports, `127.0.0.1:${engine.sipPort}`);
  });
});

/** An AOR section of pjsip.conf that sets support_path=yes; its name is group 1. */
const SUPPORT_PATH_AOR = /^\[([^\]]+)\]\ntype=aor\n(?:.+\n)*?support_path=yes$/gm;

const cases = listCases().filter(
  (name) => !compileCase(name).diagnostics.some((d) => d.severity === "error"),
);

test("the golden fixtures that compile are most of them", () => {
  assert.ok(cases.length >= 15, `only ${cases.length} fixtures compile`);
});

for (const name of cases) {
  test(`fixture ${name} loads with no WARNING/ERROR`, async () => {
    const files = fixtureFiles(name);
    const sounds = fixtureSounds(name);
    await withEngine(
      files,
      async (engine) => {
        assertClean(engine.problems(), name);
        // Loaded, not just quiet: every org context is in the dialplan.
        const contexts = await engine.cli("dialplan show");
        for (const file of files.filter((f) => f.path.endsWith("/extensions.conf"))) {
          for (const match of file.content.matchAll(/^\[([^\]]+)\]/gm)) {
            assert.match(contexts, `'${match[1]}'`, `${name}: context ${match[1]} loaded`);
          }
        }
        // And every org's music-on-hold class (an org without files has none).
        const classes = await engine.cli("moh show classes");
        for (const file of files.filter((f) => f.path.endsWith("/musiconhold.conf"))) {
          for (const match of file.content.matchAll(/^\[([^\]]+)\]/gm)) {
            assert.match(classes, `Class: ${match[1]}\n`, `${name}: class ${match[1]} loaded`);
          }
        }
        // Behind the edge (case 22): the AORs that ask for Path support have it in the engine.
        let pathAors = 0;
        for (const file of files.filter((f) => f.path.endsWith("/pjsip.conf"))) {
          for (const match of file.content.matchAll(SUPPORT_PATH_AOR)) {
            const aor = await engine.cli(`pjsip show aor ${match[1]}`);
            assert.match(aor, /support_path\s+:\s+true/, `${name}: ${match[1]} supports Path`);
            pathAors += 1;
          }
        }
        if (loadCase(name).behindEdge) assert.ok(pathAors > 0, `${name}: no AOR supports Path`);
      },
      { sounds },
    );
  });
}

test("the example orgs (orgs/*.yaml) load with no WARNING/ERROR", async () => {
  const files = await exampleOrgFiles({
    ACME_TRUNK_PASSWORD: "carrier-secret",
    ACME_1001_PASSWORD: "correct horse",
  });
  await withEngine(files, async (engine) => {
    assertClean(engine.problems(), "orgs/*.yaml");
    const endpoints = await engine.cli("pjsip show endpoints");
    assert.match(endpoints, "Endpoint:");
  });
});

test.run();
