// Every golden edge case loads in a real Kamailio 5.6: `kamailio -c` parses the generated script,
// loads its modules and checks their parameters and function calls, and must report 0 errors.
// The data files sit beside it, as they do on an edge host. Kamailio is a Debian package CI
// installs (.ci/run); without it this says so and skips, never passes silently.
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { compileEdgeCase, GOLDEN_LISTEN, listEdgeCases } from "./edge-cases.js";

const KAMAILIO = process.env.KAMAILIO_BIN ?? "/usr/sbin/kamailio";
const present = spawnSync(KAMAILIO, ["-v"], { encoding: "utf8" }).status === 0;

if (!present) {
  console.warn(
    `SKIPPED: ${KAMAILIO} not found; install Debian's kamailio to check the edge config`,
  );
} else {
  const root = mkdtempSync(join(tmpdir(), "pbx-edge-check-"));
  test.after(() => rmSync(root, { recursive: true, force: true }));
  listEdgeCases().forEach((name, index) => {
    test(`kamailio -c: ${name}`, () => {
      const dir = join(root, String(index));
      const result = compileEdgeCase(name, { ...GOLDEN_LISTEN, data_dir: dir });
      for (const file of result.files) {
        mkdirSync(dirname(join(dir, file.path)), { recursive: true });
        writeFileSync(join(dir, file.path), file.content);
      }
      const check = spawnSync(KAMAILIO, ["-c", "-f", join(dir, "kamailio.cfg")], {
        encoding: "utf8",
      });
      const output = `${check.stdout}${check.stderr}`;
      assert.equal(check.status, 0, output);
      assert.match(output, "config file ok");
      assert.not.match(output, /\bERROR\b/, output);
    });
  });
}

test.run();
