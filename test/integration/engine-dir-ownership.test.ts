// Operator safety (issue 19, defects 1 and 2): `pbxctl deploy` of YAML never overwrites the
// engine directory a server's store deploys into unless forced, and `pbxctl status` tells the
// truth about what is on disk after a file is changed behind its back or a rollback.
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import Deploy from "../../src/cli/commands/deploy.js";
import Rollback from "../../src/cli/commands/rollback.js";
import Status, { type StatusCommandResult } from "../../src/cli/commands/status.js";
import { resolveEnginePaths, resolveGitopsEngineDir } from "../../src/config.js";
import { FileDeployLog } from "../../src/deploy/deploy-log.js";
import { Deployer } from "../../src/deploy/deployer.js";
import { orgUnit } from "../../src/deploy/units.js";
import { createNoneTarget } from "../../src/engine/none-target.js";
import { runCommand } from "../cli/run-command.js";
import { startRig } from "./helpers.js";

const ORG_YAML = [
  "org:",
  "  id: 11111111-1111-4111-8111-111111111111",
  "  name: Git One",
  "  context_prefix: gitone_",
  "users:",
  '  - { extension: "100", name: Alice, sip: { md5_cred: 0123456789abcdef0123456789abcdef } }',
  "",
].join("\n");

test("the store-less default engine directory is never the server's", () => {
  const env = { PBX_DATA_DIR: "/srv/pbx" };
  assert.is.not(resolveGitopsEngineDir(env), resolveEnginePaths(env).asteriskDir);
  assert.is.not(resolveGitopsEngineDir({}), resolveEnginePaths({}).asteriskDir);
});

test("deploy refuses the server's engine directory, naming the store, and writes nothing", async () => {
  const rig = await startRig({});
  try {
    const org = await rig.createOrg("Api Made");
    await rig.advance(1000);
    const top = rig.read("extensions.conf");
    assert.match(top!, org.prefix);
    await mkdir(join(rig.dataDir, "orgs"));
    await writeFile(join(rig.dataDir, "orgs", "one.yaml"), ORG_YAML);

    const refused = await runCommand(Deploy, [join(rig.dataDir, "orgs"), "--etc", rig.engineDir]);
    assert.is(refused.code, 1);
    const message = String(refused.error?.message);
    assert.match(message, `owned by the server's store in ${rig.dataDir}`);
    assert.match(message, "--force");
    assert.not.match(refused.stderr, / {4}at /, "no stack trace");
    assert.is(rig.read("extensions.conf"), top, "the server's include file is untouched");
    assert.is(rig.read("orgs/gitone_/extensions.conf"), null);

    const json = await runCommand(Deploy, [
      join(rig.dataDir, "orgs"),
      "--etc",
      rig.engineDir,
      "--json",
    ]);
    assert.is(json.code, 1);
    assert.match(JSON.parse(json.stdout).error, "owned by the server's store");

    const forced = await runCommand(Deploy, [
      join(rig.dataDir, "orgs"),
      "--etc",
      rig.engineDir,
      "--force",
    ]);
    assert.is(forced.code, 0, forced.stderr + String(forced.error));
    assert.ok(rig.read("orgs/gitone_/extensions.conf") !== null);
    // Forcing does not hand the directory over: the next plain deploy is refused again.
    const again = await runCommand(Deploy, [join(rig.dataDir, "orgs"), "--etc", rig.engineDir]);
    assert.is(again.code, 1);
  } finally {
    await rig.close();
  }
});

test("deploy refuses a directory holding engine files no deploy recorded", async () => {
  const rig = await startRig({});
  try {
    const etc = join(rig.dataDir, "handmade");
    await mkdir(join(etc, "orgs", "hand_"), { recursive: true });
    await writeFile(join(etc, "orgs", "hand_", "extensions.conf"), "[hand_internal]\n");
    await mkdir(join(rig.dataDir, "orgs"));
    await writeFile(join(rig.dataDir, "orgs", "one.yaml"), ORG_YAML);
    const refused = await runCommand(Deploy, [join(rig.dataDir, "orgs"), "--etc", etc]);
    assert.is(refused.code, 1);
    assert.match(String(refused.error?.message), "written by another source");
  } finally {
    await rig.close();
  }
});

test("status shows DRIFTED for a file changed behind its back, and --refresh re-reads", async () => {
  const rig = await startRig({});
  try {
    const etc = join(rig.dataDir, "gitops");
    await mkdir(join(rig.dataDir, "orgs"));
    await writeFile(join(rig.dataDir, "orgs", "one.yaml"), ORG_YAML);
    const deployed = await runCommand(Deploy, [join(rig.dataDir, "orgs"), "--etc", etc]);
    assert.is(deployed.code, 0, deployed.stderr + String(deployed.error));
    const status = async (...extra: string[]) => {
      const out = await runCommand(Status, ["--etc", etc, ...extra]);
      const json = await runCommand(Status, ["--etc", etc, "--json", ...extra]);
      assert.is(out.code, json.code);
      // The JSON is printed whatever the exit code says.
      return {
        text: out.stdout,
        code: json.code,
        result: JSON.parse(json.stdout) as StatusCommandResult,
      };
    };
    const clean = await status();
    assert.is(clean.code, 0, "every unit OK");
    // Named by the org its files were generated for, beside the prefix.
    assert.is(clean.result.units.find((unit) => unit.unit === "org:gitone_")?.org, "Git One");
    assert.match(clean.text, /org:gitone_\s+Git One\s/);
    assert.ok(clean.result.units.every((unit) => unit.drifted.length === 0));
    assert.not.match(clean.text, "DRIFTED");

    await writeFile(join(etc, "orgs/gitone_/extensions.conf"), "; edited by hand\n");
    const drifted = await status();
    assert.is(drifted.code, 4, "DRIFTED exits 4");
    const one = drifted.result.units.find((unit) => unit.unit === "org:gitone_")!;

    assert.equal(one.drifted, [{ path: "orgs/gitone_/extensions.conf", change: "changed" }]);
    assert.match(drifted.text, /org:gitone_ .*DRIFTED/);
    assert.match(drifted.text, "drifted: orgs/gitone_/extensions.conf (changed)");
    const refreshed = await status("--refresh");
    assert.equal(
      refreshed.result.units.find((unit) => unit.unit === "org:gitone_")!.drifted,
      one.drifted,
    );
    // Columns line up: every row's second column starts where the header's does.
    const lines = drifted.text.split("\n").filter((line) => /^(UNIT|org:|gateway|top)/.test(line));
    const column = lines[0]!.indexOf("APPLIED");
    for (const line of lines.slice(1)) assert.match(line.slice(column), /^([0-9a-f]{12}|\(none\))/);
  } finally {
    await rig.close();
  }
});

test("after a rollback in the server's directory status shows the restored revision and PENDING", async () => {
  const rig = await startRig({});
  try {
    const org = await rig.createOrg("Acme");
    await rig.advance(1000);
    const first = rig.read(`orgs/${org.prefix}/extensions.conf`);
    const renamed = await rig.request("PUT", `/api/v1/organizations/${org.id}`, {
      headers: { "x-api-key": org.api_key },
      body: { settings: { max_concurrent_calls: 7 } },
    });
    assert.is(renamed.status, 200, renamed.text);
    await rig.advance(1000);
    assert.is.not(rig.read(`orgs/${org.prefix}/extensions.conf`), first);

    // The org by its slug, as `export` and `calls` take it: the directory's store knows it.
    const unknown = await runCommand(Rollback, ["--org", "globex", "--etc", rig.engineDir]);
    assert.is(unknown.code, 1);
    assert.match(
      String(unknown.error?.message),
      `no org with the id or slug "globex" in the store`,
    );
    const rollback = await runCommand(Rollback, ["--org", "acme", "--etc", rig.engineDir]);
    assert.is(rollback.code, 0, rollback.stderr + String(rollback.error));
    assert.is(rig.read(`orgs/${org.prefix}/extensions.conf`), first);

    const out = await runCommand(Status, ["--data-dir", rig.dataDir, "--json"]);
    assert.is(out.code, 3, "PENDING exits 3");
    const unit = (JSON.parse(out.stdout) as StatusCommandResult).units.find(
      (u) => u.unit === `org:${org.prefix}`,
    )!;
    assert.is(unit.org, "acme", "named by its slug from the store");
    assert.is(unit.pending, true, "the store's revision is not live any more");
    assert.is(unit.lastDeploy?.trigger, "rollback");
    assert.is(unit.lastDeploy?.restored?.revision, unit.appliedRevision);
    assert.is.not(unit.appliedRevision, unit.desiredRevision);
    assert.equal(unit.drifted, [], "the record matches the restored files");
    const text = await runCommand(Status, ["--data-dir", rig.dataDir]);
    assert.match(
      text.stdout,
      new RegExp(`org:${org.prefix} +acme .*\\(rollback to [0-9a-f]{12}\\).*PENDING`),
    );
  } finally {
    await rig.close();
  }
});

test("a rollback recorded in another log (as pbxctl did before) shows as DRIFTED in the store's status", async () => {
  const rig = await startRig({});
  try {
    const org = await rig.createOrg("Acme");
    await rig.advance(1000);
    const changed = await rig.request("PUT", `/api/v1/organizations/${org.id}`, {
      headers: { "x-api-key": org.api_key },
      body: { settings: { max_concurrent_calls: 9 } },
    });
    assert.is(changed.status, 200, changed.text);
    await rig.advance(1000);
    // The old CLI rolled back with the file log of the engine directory: the store never heard.
    const elsewhere = new Deployer({
      engineDir: rig.engineDir,
      target: createNoneTarget(),
      log: new FileDeployLog(rig.engineDir),
    });
    await elsewhere.rollback(orgUnit(org.prefix));
    const out = await runCommand(Status, ["--data-dir", rig.dataDir, "--json"]);
    assert.is(out.code, 4, "DRIFTED exits 4");
    const unit = (JSON.parse(out.stdout) as StatusCommandResult).units.find(
      (u) => u.unit === `org:${org.prefix}`,
    )!;
    assert.equal(unit.drifted, [{ path: `orgs/${org.prefix}/extensions.conf`, change: "changed" }]);
    const text = await runCommand(Status, ["--data-dir", rig.dataDir]);
    assert.match(text.stdout, new RegExp(`org:${org.prefix} .*DRIFTED`));
    assert.match(text.stdout, `drifted: orgs/${org.prefix}/extensions.conf (changed)`);
  } finally {
    await rig.close();
  }
});

test("the server takes over a directory another source recorded, says so, and records itself", async () => {
  const rig = await startRig({});
  try {
    await writeFile(join(rig.engineDir, ".pbxctl", "owner.json"), '{"kind":"files"}\n');
    await rig.restart();
    assert.ok(
      rig.logs.some((line) => line.includes("taking over the engine directory")),
      "the take-over is in the log",
    );
    assert.equal(JSON.parse(await readFile(join(rig.engineDir, ".pbxctl", "owner.json"), "utf8")), {
      kind: "store",
      dataDir: rig.dataDir,
    });
  } finally {
    await rig.close();
  }
});

test.run();
