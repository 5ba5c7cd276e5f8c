import { existsSync } from "node:fs";
import { lstat, mkdir, readFile, readlink, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import Deploy, { type DeployCommandResult } from "../../src/cli/commands/deploy.js";
import EngineInit from "../../src/cli/commands/engine/init.js";
import Rollback from "../../src/cli/commands/rollback.js";
import Status, { type StatusCommandResult } from "../../src/cli/commands/status.js";
import { withSystemName } from "../../src/engine/engine-init.js";
import { FakeAmiServer } from "../../src/engine/testing/fake-ami.js";
import { runCommand, withEnv } from "../cli/run-command.js";
import { tempDir } from "./helpers.js";

function orgYaml(strategy: string): string {
  return [
    "org:",
    "  id: 11111111-1111-4111-8111-111111111111",
    "  name: Test One",
    "  context_prefix: one_",
    "users:",
    '  - { extension: "100", name: Alice, sip: { md5_cred: 0123456789abcdef0123456789abcdef } }',
    "queues:",
    `  - { number: "5000", name: Sales, strategy: ${strategy}, members: [{ extension: "100" }] }`,
    "",
  ].join("\n");
}

test("deploy, redeploy, queue-only change, status and rollback from YAML against a fake AMI", async () => {
  const { dir, cleanup } = await tempDir();
  const ami = new FakeAmiServer({ engineDir: join(dir, "etc") });
  const port = await ami.listen();
  const env = {
    PBX_AMI_PORT: String(port),
    PBX_AMI_USERNAME: "pbxctl",
    PBX_AMI_SECRET: "secret",
  };
  const orgs = join(dir, "orgs");
  const etc = join(dir, "etc");
  try {
    await mkdir(orgs);
    await writeFile(join(orgs, "one.yaml"), orgYaml("ringall"));
    await withEnv(env, async () => {
      const deploy = async () => {
        const out = await runCommand(Deploy, [orgs, "--etc", etc, "--engine", "ami", "--json"]);
        return { ...out, result: out.result as DeployCommandResult | undefined };
      };
      const first = await deploy();
      assert.is(first.code, 0, first.stderr + String(first.error));
      assert.is(first.result?.failed, 0);
      assert.ok(first.result!.changed.some((unit) => unit.unit === "org:one_"));
      assert.ok(ami.reloadCommands().includes("dialplan reload"));
      assert.ok(ami.reloadCommands().includes("module reload res_pjsip.so"));
      await assert.not.throws(() => readFile(join(etc, "orgs/one_/extensions.conf"), "utf8"));
      await assert.not.throws(() => readFile(join(etc, "extensions.conf"), "utf8"));

      const reloadsBefore = ami.reloadCommands().length;
      const again = await deploy();
      assert.is(again.code, 0);
      assert.equal(again.result?.changed, []);
      assert.is(ami.reloadCommands().length, reloadsBefore, "unchanged redeploy reloads nothing");

      await writeFile(join(orgs, "one.yaml"), orgYaml("linear"));
      const queueChange = await deploy();
      assert.is(queueChange.code, 0);
      const sent = ami.reloadCommands().slice(reloadsBefore);
      assert.is(sent.length, 1, `one reload, got ${sent.join(", ")}`);
      assert.match(sent[0]!, /^queue reload all \S+/);

      const statusRun = await runCommand(Status, ["--etc", etc, "--json"]);
      const status = { ...statusRun, result: statusRun.result as StatusCommandResult | undefined };
      assert.is(status.code, 0);
      const one = status.result!.units.find((unit) => unit.unit === "org:one_");
      assert.ok(one?.appliedRevision);
      assert.is(one?.pending, false);
      assert.is(one?.lastDeploy?.result, "ok");
      assert.is(one?.health?.status, "healthy");

      const rollback = await runCommand(Rollback, [
        "--org",
        "one_",
        "--etc",
        etc,
        "--engine",
        "ami",
      ]);
      assert.is(rollback.code, 0, rollback.stderr);
      assert.match(rollback.stdout, "rolled back");
      assert.match(await readFile(join(etc, "orgs/one_/queues.conf"), "utf8"), /ringall/);
    });
  } finally {
    await ami.close();
    await cleanup();
  }
});

test("deploy --engine ami with no engine listening fails at once, once, naming host:port and the causes", async () => {
  const { dir, cleanup } = await tempDir();
  const ami = new FakeAmiServer();
  const port = await ami.listen();
  await ami.close(); // nothing listens there any more
  try {
    await mkdir(join(dir, "orgs"));
    await writeFile(join(dir, "orgs", "one.yaml"), orgYaml("ringall"));
    const env = {
      PBX_AMI_PORT: String(port),
      PBX_AMI_USERNAME: "pbxctl",
      PBX_AMI_SECRET: "secret",
    };
    await withEnv(env, async () => {
      const etc = join(dir, "etc");
      const out = await runCommand(Deploy, [join(dir, "orgs"), "--etc", etc, "--engine", "ami"]);
      assert.is(out.code, 1);
      const message = String(out.error?.message);
      assert.match(message, `cannot reach Asterisk's AMI at 127.0.0.1:${port}: connection refused`);
      assert.match(message, "Is Asterisk running");
      assert.not.match(out.stderr, "AMI not connected");
      assert.is(message.split("cannot reach").length, 2, "said once");
      const rollback = await runCommand(Rollback, [
        "--org",
        "one_",
        "--etc",
        etc,
        "--engine",
        "ami",
      ]);
      assert.match(String(rollback.error?.message), `AMI at 127.0.0.1:${port}`);
    });
  } finally {
    await cleanup();
  }
});

test("deploy refuses invalid YAML and writes nothing", async () => {
  const { dir, cleanup } = await tempDir();
  try {
    await writeFile(join(dir, "bad.yaml"), orgYaml("sideways"));
    const etc = join(dir, "etc");
    const out = await runCommand(Deploy, [join(dir, "bad.yaml"), "--etc", etc]);
    assert.is(out.code, 1);
    assert.not.match(out.stderr, / {4}at /, "no stack trace");
    let missing = false;
    await lstat(etc).catch(() => {
      missing = true;
    });
    assert.ok(missing, "nothing written");
  } finally {
    await cleanup();
  }
});

test("rollback without history fails with one clear line", async () => {
  const { dir, cleanup } = await tempDir();
  try {
    const out = await runCommand(Rollback, ["--org", "one_", "--etc", dir]);
    assert.is(out.code, 1);
    // Where it looked, so a wrong directory is obvious.
    assert.match(
      String(out.error?.message),
      `no previous version of org:one_ to roll back to in ${join(dir, ".pbxctl/previous/orgs/one_.json")} (engine directory ${dir};`,
    );
    // An org by id is found by its generated files' header; a slug needs a server's store.
    await mkdir(join(dir, "orgs/one_"), { recursive: true });
    await writeFile(
      join(dir, "orgs/one_/extensions.conf"),
      "; generated by pbxctl for org One (11111111-1111-4111-8111-111111111111). Do not edit\n",
    );
    const byId = await runCommand(Rollback, [
      "--org",
      "11111111-1111-4111-8111-111111111111",
      "--etc",
      dir,
      "--force",
    ]);
    assert.match(String(byId.error?.message), "no previous version of org:one_");
    const bySlug = await runCommand(Rollback, ["--org", "acme", "--etc", dir, "--force"]);
    assert.is(bySlug.code, 1);
    assert.match(
      String(bySlug.error?.message),
      `no org "acme" deployed in ${dir}. Give its context prefix: one of one_;`,
    );
    // Without --etc: the default directory is named as the default.
    await withEnv({ PBX_ASTERISK_DIR: "" }, async () => {
      const cwd = process.cwd();
      process.chdir(dir);
      try {
        const fallback = await runCommand(Rollback, ["--org", "one_"]);
        assert.match(String(fallback.error?.message), join(dir, "var/gitops-asterisk"));
        assert.match(
          String(fallback.error?.message),
          "default directory of `pbxctl deploy`; pass --etc DIR",
        );
      } finally {
        process.chdir(cwd);
      }
    });
  } finally {
    await cleanup();
  }
});

test("engine init writes the Asterisk entry files and links the generated tree", async () => {
  const { dir, cleanup } = await tempDir();
  try {
    const etc = join(dir, "asterisk");
    const out = await runCommand(EngineInit, ["--etc", etc, "--ami-secret", "s3cret-value"]);
    assert.is(out.code, 0, out.stderr + String(out.error));
    const manager = await readFile(join(etc, "manager.conf"), "utf8");
    assert.match(manager, "bindaddr = 127.0.0.1");
    assert.match(manager, "[pbxctl]\nsecret = s3cret-value");
    assert.match(manager, /^write = .*command/m);
    const cdr = await readFile(join(etc, "cdr_manager.conf"), "utf8");
    assert.match(cdr, "enabled = yes");
    // Call history dedupes by LinkedID; isolation rule 3 needs PeerAccount.
    assert.match(cdr, "[mappings]\nlinkedid => LinkedID\npeeraccount => PeerAccount");
    const modules = await readFile(join(etc, "modules.conf"), "utf8");
    // Secure by default: only what pbxctl uses; no IAX2/DUNDi/UNISTIM listeners, no SHELL().
    assert.match(modules, "autoload = no");
    assert.match(modules, "load => pbx_config.so");
    assert.match(modules, "load => chan_pjsip.so");
    for (const off of ["chan_iax2", "pbx_dundi", "chan_unistim", "func_shell", "res_ari"]) {
      assert.not.match(modules, `load => ${off}.so`);
    }
    // Asterisk boots before the first deploy: the generated include files exist (empty).
    for (const name of [
      "extensions.conf",
      "musiconhold.conf",
      "pjsip.conf",
      "queues.conf",
      "gateway/extensions.conf",
    ]) {
      assert.match(await readFile(join(etc, "pbxctl", name), "utf8"), "nothing deployed yet");
    }
    const pjsip = await readFile(join(etc, "pjsip.conf"), "utf8");
    // Loopback unless told otherwise, and said on stderr.
    assert.match(pjsip, "type = transport\nprotocol = udp\nbind = 127.0.0.1:5060");
    assert.match(pjsip, "type = transport\nprotocol = tcp\nbind = 127.0.0.1:5060");
    assert.match(out.stderr, "SIP listens on 127.0.0.1:5060 (loopback) only");
    assert.match(out.stderr, "--sip-bind <address>");
    assert.not.match(pjsip, "pbxctl-carrier", "no carrier endpoint unless --carrier");
    assert.match(pjsip, '#include "pbxctl/pjsip.conf"');
    assert.match(
      await readFile(join(etc, "extensions.conf"), "utf8"),
      '#include "pbxctl/extensions.conf"',
    );
    assert.match(await readFile(join(etc, "queues.conf"), "utf8"), '#include "pbxctl/queues.conf"');
    assert.match(
      await readFile(join(etc, "voicemail.conf"), "utf8"),
      '#include "pbxctl/voicemail.conf"',
    );
    // Stock hold music stays the default class; each org's own class comes from the include.
    assert.match(
      await readFile(join(etc, "musiconhold.conf"), "utf8"),
      /\[default\]\nmode = files\ndirectory = moh\n\n#include "pbxctl\/musiconhold.conf"/,
    );
    assert.is(await readlink(join(etc, "orgs")), "pbxctl/orgs");
    assert.is(await readlink(join(etc, "gateway")), "pbxctl/gateway");
    assert.match(out.stdout, `export PBX_ASTERISK_DIR=${join(etc, "pbxctl")}`);
    // Every variable the server needs, the recordings directory included (Asterisk's defaults
    // without an asterisk.conf in --etc).
    for (const line of [
      "export PBX_ENGINE=ami",
      "export PBX_AMI_USERNAME=pbxctl",
      "export PBX_AMI_SECRET=s3cret-value",
      "export PBX_SOUNDS_DIR=/var/lib/asterisk/sounds",
      "export PBX_RECORDINGS_DIR=/var/spool/asterisk/monitor",
    ]) {
      assert.match(out.stdout, line);
    }

    const again = await runCommand(EngineInit, ["--etc", etc]);
    assert.is(again.code, 1);
    assert.match(String(again.error?.message), "pass --force");
    const same = await runCommand(EngineInit, ["--etc", etc, "--generated", etc, "--force"]);
    assert.is(same.code, 1);
    assert.match(String(same.error?.message), "--generated must differ from --etc");
    const badSecret = await runCommand(EngineInit, [
      "--etc",
      etc,
      "--force",
      "--ami-secret",
      "a;b\nc",
    ]);
    assert.is(badSecret.code, 1);

    // A public address and a carrier; directories from the engine's own asterisk.conf.
    await writeFile(
      join(etc, "asterisk.conf"),
      "[directories]\nastdatadir => /usr/share/asterisk\nastspooldir => /srv/spool\n",
    );
    const open = await runCommand(EngineInit, [
      "--etc",
      etc,
      "--force",
      "--sip-bind",
      "0.0.0.0",
      "--carrier",
      "203.0.113.10",
      "--carrier",
      "198.51.100.0/24",
    ]);
    assert.is(open.code, 0, open.stderr + String(open.error));
    assert.not.match(open.stderr, "loopback");
    const opened = await readFile(join(etc, "pjsip.conf"), "utf8");
    assert.match(opened, "protocol = udp\nbind = 0.0.0.0:5060");
    assert.match(
      opened,
      "[pbxctl-carrier]\ntype = endpoint\ncontext = gateway-inbound\n",
      "the carrier's calls start in the generated gateway",
    );
    assert.match(
      opened,
      "[pbxctl-carrier]\ntype = identify\nendpoint = pbxctl-carrier\nmatch = 203.0.113.10,198.51.100.0/24\n",
    );
    assert.match(open.stdout, "export PBX_SOUNDS_DIR=/usr/share/asterisk/sounds");
    assert.match(open.stdout, "export PBX_RECORDINGS_DIR=/srv/spool/monitor");
    const badCarrier = await runCommand(EngineInit, ["--etc", etc, "--force", "--carrier", "a;b"]);
    assert.is(badCarrier.code, 1);
    assert.match(String(badCarrier.error?.message), "--carrier is not an IP address or CIDR range");
  } finally {
    await cleanup();
  }
});

test("engine init --pjsip realtime adds sorcery, extconfig and res_pgsql; file mode has none", async () => {
  const { dir, cleanup } = await tempDir();
  try {
    const etc = join(dir, "asterisk");
    const url = "postgres://pbx:p%40ss@10.0.0.5:6543/pbxdb";
    const out = await runCommand(EngineInit, [
      "--etc",
      etc,
      "--pjsip",
      "realtime",
      "--database-url",
      url,
    ]);
    assert.is(out.code, 0, out.stderr + String(out.error));
    const sorcery = await readFile(join(etc, "sorcery.conf"), "utf8");
    // Looked up by id only, behind a memory cache with a backstop lifetime (ASTERISK.md).
    for (const [type, table] of [
      ["endpoint", "ps_endpoints"],
      ["auth", "ps_auths"],
      ["aor", "ps_aors"],
    ]) {
      assert.match(
        sorcery,
        `${type}/cache = memory_cache,object_lifetime_stale=120,object_lifetime_maximum=900,expire_on_reload=yes\n${type} = realtime,${table},allow_unqualified_fetch=no\n`,
      );
    }
    assert.match(
      sorcery,
      "[res_pjsip_outbound_registration]\nregistration = realtime,ps_registrations\n",
    );
    assert.not.match(sorcery, /^identify/m, "identify stays in pjsip.conf");
    const extconfig = await readFile(join(etc, "extconfig.conf"), "utf8");
    for (const table of ["ps_endpoints", "ps_auths", "ps_aors", "ps_registrations"]) {
      assert.match(extconfig, `${table} => pgsql,general\n`);
    }
    const pgsql = await readFile(join(etc, "res_pgsql.conf"), "utf8");
    assert.match(
      pgsql,
      "hostname = 10.0.0.5\nport = 6543\ndbname = pbxdb\nuser = pbx\npassword = p@ss\n",
    );
    assert.is(
      (await stat(join(etc, "res_pgsql.conf"))).mode & 0o777,
      0o640,
      "the password is not world-readable",
    );
    const modules = await readFile(join(etc, "modules.conf"), "utf8");
    for (const name of ["res_config_pgsql", "res_sorcery_realtime", "res_sorcery_memory_cache"]) {
      assert.match(modules, `load => ${name}.so`);
    }
    const pjsip = await readFile(join(etc, "pjsip.conf"), "utf8");
    assert.match(
      pjsip,
      "[global]\ntype = global\nendpoint_identifier_order = username,ip\ntaskprocessor_overload_trigger = pjsip_only\ndisable_multi_domain = yes\n",
    );

    const plain = join(dir, "plain");
    assert.is((await runCommand(EngineInit, ["--etc", plain])).code, 0);
    for (const name of ["sorcery.conf", "extconfig.conf", "res_pgsql.conf"]) {
      assert.not.ok(existsSync(join(plain, name)), `file mode writes no ${name}`);
    }
    const plainPjsip = await readFile(join(plain, "pjsip.conf"), "utf8");
    assert.match(
      plainPjsip,
      "[global]\ntype = global\nendpoint_identifier_order = username,ip\ntaskprocessor_overload_trigger = pjsip_only\n\n",
    );
    assert.not.match(plainPjsip, "disable_multi_domain", "file mode keeps multi-domain lookups");
    assert.is(pjsip.split("[global]").length, 2, "one global section in realtime mode");
    assert.not.match(await readFile(join(plain, "modules.conf"), "utf8"), "res_config_pgsql");

    for (const [args, message] of [
      [["--pjsip", "realtime"], "--pjsip realtime needs --database-url"],
      [["--database-url", url], "--database-url is only used with --pjsip realtime"],
      [["--pjsip", "realtime", "--database-url", "mysql://a@b/c"], "must start with postgres://"],
      [
        ["--pjsip", "realtime", "--database-url", "postgres://a@localhost/c"],
        "other than localhost",
      ],
      [["--pjsip", "realtime", "--database-url", "postgres://a:x%3By@h/c"], "may not hold ';'"],
      [["--pjsip", "realtime", "--database-url", "postgres://a:b@h/"], "needs a database name"],
    ] as const) {
      const bad = await runCommand(EngineInit, ["--etc", join(dir, "bad"), ...args]);
      assert.is(bad.code, 1, args.join(" "));
      assert.match(String(bad.error?.message), message);
    }
  } finally {
    await cleanup();
  }
});

test("engine init --node maps realtime to the node's own views; --system-name sets asterisk.conf's systemname", async () => {
  const { dir, cleanup } = await tempDir();
  try {
    const etc = join(dir, "asterisk");
    const url = "postgres://pbx:secret@10.0.0.5/pbxdb";
    const out = await runCommand(EngineInit, [
      "--etc",
      etc,
      "--pjsip",
      "realtime",
      "--database-url",
      url,
      "--node",
      "node-2",
      "--system-name",
      "node-2",
    ]);
    assert.is(out.code, 0, out.stderr + String(out.error));
    // The node reads the rows of its orgs only (src/store/node-realtime-views.ts).
    const extconfig = await readFile(join(etc, "extconfig.conf"), "utf8");
    for (const table of ["ps_endpoints", "ps_auths", "ps_aors", "ps_registrations"]) {
      assert.match(extconfig, `\n${table} => pgsql,general,pbx_node_node_2.${table}\n`);
    }
    assert.is(
      await readFile(join(etc, "asterisk.conf"), "utf8"),
      "; Written by `pbxctl engine init --system-name`.\n[options]\nsystemname = node-2\n",
    );
    assert.match(out.stdout, `set systemname = node-2 in ${etc}/asterisk.conf`);

    // An existing asterisk.conf keeps everything else; the setting is replaced where it is.
    const kept = join(dir, "kept");
    await mkdir(kept, { recursive: true });
    const own =
      "[directories]\nastdatadir => /srv/ast\n\n[options]\nverbose = 3\nsystemname = old\n";
    await writeFile(join(kept, "asterisk.conf"), own);
    assert.is((await runCommand(EngineInit, ["--etc", kept, "--system-name", "node-1"])).code, 0);
    assert.is(
      await readFile(join(kept, "asterisk.conf"), "utf8"),
      own.replace("systemname = old", "systemname = node-1"),
    );
    assert.is(
      withSystemName("[directories]\nastdatadir => /a\n", "n1"),
      "[directories]\nastdatadir => /a\n[options]\nsystemname = n1\n",
    );
    assert.is(
      withSystemName("[options]\nverbose = 3\n", "n1"),
      "[options]\nsystemname = n1\nverbose = 3\n",
    );

    // Without --system-name, asterisk.conf is never written (the quick start is unchanged).
    const plain = join(dir, "plain");
    assert.is((await runCommand(EngineInit, ["--etc", plain])).code, 0);
    assert.not.ok(existsSync(join(plain, "asterisk.conf")));

    for (const [args, message] of [
      [["--node", "node-1"], "--node is only used with --pjsip realtime"],
      [
        ["--pjsip", "realtime", "--database-url", url, "--node", "Node_1"],
        "--node must be an engine node's name",
      ],
      [["--system-name", "a b"], "--system-name may hold letters, digits, _ and -"],
      [["--system-name", "x;y"], "--system-name may hold letters, digits, _ and -"],
    ] as const) {
      const bad = await runCommand(EngineInit, ["--etc", join(dir, "bad"), ...args]);
      assert.is(bad.code, 1, args.join(" "));
      assert.match(String(bad.error?.message), message);
    }
  } finally {
    await cleanup();
  }
});

test.run();
