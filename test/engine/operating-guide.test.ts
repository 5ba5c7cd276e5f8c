// docs/operating.md followed literally against a real Asterisk 22 and Debian's baresip. Each
// step reads what the guide says, so the guide and this test cannot drift apart:
// - §1: the guide's `pbxctl engine init` line, run as written with $SIP_ADDRESS=127.0.0.1 and
//   $CARRIER_ADDRESS=127.0.0.2 and /etc/asterisk replaced by the engine's config directory (plus
//   the free ports every engine test uses instead of 5060/5038); Asterisk boots on what it wrote;
// - §2: the server runs with exactly the variables it printed (PBX_ENGINE=ami among them);
// - §3: the guide's `POST /dids` body routes a DID; a stand-in carrier at $CARRIER_ADDRESS sends
//   an INVITE for it, which starts in gateway-inbound;
// - §4: the guide's `POST /users` body creates the user, and a softphone registers with the user
//   name, password, realm and transport of the guide's softphone table, and rings for that call.
import { readFileSync } from "node:fs";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import EngineInit from "../../src/cli/commands/engine/init.js";
import type { EngineInitResult } from "../../src/engine/engine-init.js";
import type { AsteriskInstance } from "../../src/engine/testing/asterisk-instance.js";
import { runCommand } from "../cli/run-command.js";
import { type Rig, startRig } from "../integration/helpers.js";
import { startBaresip } from "./baresip.js";
import { boot, ROOT, until } from "./helpers.js";

const GUIDE = readFileSync(`${ROOT}docs/operating.md`, "utf8");
const SIP_ADDRESS = "127.0.0.1";
const CARRIER_ADDRESS = "127.0.0.2";

/** The first line of the guide matching `pattern` (throws when the guide lost it). */
function guideLine(pattern: RegExp): string {
  const line = GUIDE.split("\n").find((l) => pattern.test(l));
  if (!line) throw new Error(`docs/operating.md has no line matching ${pattern}`);
  return line;
}

/** The shell words of a guide command, its variables given their test values. */
function shellWords(line: string, etcDir: string): string[] {
  const words = line.match(/"[^"]*"|'[^']*'|\S+/g) ?? [];
  return words.map((word) =>
    word
      .replace(/^["']|["']$/g, "")
      .replace("$SIP_ADDRESS", SIP_ADDRESS)
      .replace("$CARRIER_ADDRESS", CARRIER_ADDRESS)
      .replace(/^\/etc\/asterisk$/, etcDir),
  );
}

/** The guide's curl line for `path` (its `$VARIABLES` as written) and the line after it. */
function guideCurl(method: string, path: string): string {
  const lines = GUIDE.split("\n");
  const at = lines.findIndex((l) => l.startsWith(`curl -X ${method} "$PBX_URL/api/v1${path}"`));
  if (at < 0) throw new Error(`docs/operating.md has no curl -X ${method} for ${path}`);
  return lines.slice(at, at + 2).join("\n");
}

/** The JSON body (`-d '...'`) of the guide's curl call. */
function guideBody(method: string, path: string): Record<string, unknown> {
  const body = /-d '([^']*)'/.exec(guideCurl(method, path))?.[1];
  if (!body) throw new Error(`docs/operating.md has no curl -d for ${method} ${path}`);
  return JSON.parse(body) as Record<string, unknown>;
}

/** The guide's softphone table: setting -> value (backticks kept). */
function softphoneTable(): Map<string, string> {
  const section = GUIDE.slice(GUIDE.indexOf("### 4. A softphone"));
  const rows = new Map<string, string>();
  for (const line of section.split("\n")) {
    const cells = /^\| ([^|]+) \| (.+) \|$/.exec(line);
    if (cells && cells[1] !== "setting" && !cells[1]!.startsWith("---")) {
      rows.set(cells[1]!.trim(), cells[2]!.trim());
    }
  }
  return rows;
}

interface Context {
  engine: AsteriskInstance;
  init: EngineInitResult;
  rig: Rig;
}

const test = suite<Context>("operating guide");

test.before(async (context) => {
  // §1, as written.
  const command = guideLine(/^pbxctl engine init /);
  context.engine = await boot([], {
    init: async ({ etcDir, amiPort, sipPort, amiSecret }) => {
      const argv = [
        ...shellWords(command, etcDir).slice(3),
        // What every engine test changes: free loopback ports, a known secret.
        ...["--ami-port", String(amiPort), "--sip-port", String(sipPort)],
        ...["--ami-secret", amiSecret, "--json"],
      ];
      const out = await runCommand(EngineInit, argv);
      assert.is(out.code, 0, `${argv.join(" ")}: ${out.stderr}${String(out.error)}`);
      context.init = out.result as EngineInitResult;
      return { generatedDir: context.init.generatedDir };
    },
  });
  // §2: the server with exactly what engine init printed.
  context.rig = await startRig({ env: context.init.env });
});

test.after(async (context) => {
  await context.rig?.close();
  await context.engine?.stop();
});

test("§1 engine init printed every variable the server needs, pointing at this engine", (context) => {
  const { env } = context.init;
  const { engine } = context;
  assert.is(env.PBX_ENGINE, "ami");
  assert.is(env.PBX_ASTERISK_DIR, engine.generatedDir);
  assert.is(env.PBX_AMI_PORT, String(engine.amiPort));
  // Read from the engine's asterisk.conf: where Asterisk plays sounds and writes recordings.
  assert.is(env.PBX_SOUNDS_DIR, engine.soundsDir);
  assert.is(env.PBX_RECORDINGS_DIR, engine.recordingsDir);
  assert.is(context.init.sipListen, `${SIP_ADDRESS}:${engine.sipPort}`);
  assert.equal(context.engine.problems(), [], "Asterisk booted on it with no warning");
});

test("§2-§4 a softphone registers as the guide says and rings for a carrier's call into gateway-inbound", async (context) => {
  const { engine, rig } = context;
  const org = await rig.createOrg("Acme");
  const admin = await rig.adminHeaders();
  const send = async (method: string, path: string, headers: Record<string, string>) => {
    const guidePath = path.replace(/[0-9a-f-]{36}/, (id) =>
      id === didId ? "$DID_ID" : "$REQUEST_ID",
    );
    // The credential the guide's line sends is the one used here.
    const line = guideCurl(method, guidePath);
    assert.match(
      line.split("\n")[0]!,
      "X-API-Key" in headers ? "X-API-Key: $ORG_KEY" : "Bearer $ADMIN_TOKEN",
    );
    const body = line.includes("-d '") ? guideBody(method, guidePath) : undefined;
    const res = await rig.request(method, `/api/v1${path}`, {
      headers,
      ...(body ? { body } : {}),
    });
    assert.ok(res.status === 200 || res.status === 201, `${method} ${path}: ${res.text}`);
    return res.body;
  };
  let didId = "";
  // §4: the user first (the DID's routing names it), then §3: the pool DID, requested, approved
  // and routed, each call as the guide writes it.
  const user = await send("POST", "/users", { "X-API-Key": org.api_key });
  const did = await send("POST", "/did-pool/admin", admin);
  didId = did.id;
  const request = await send("POST", `/did-pool/${didId}/request`, { "X-API-Key": org.api_key });
  await send("POST", `/did-pool/admin/requests/${request.id}/approve`, admin);
  await send("PUT", `/dids/${didId}/routing`, { "X-API-Key": org.api_key });
  await rig.advance(6000); // past the deploy debounce: the engine reloads now
  await until("the user's endpoint in the engine", async () =>
    /Unable to find object/.test(await engine.cli(`pjsip show endpoint ${user.sip_username}`))
      ? null
      : true,
  );

  const table = softphoneTable();
  // User name: `sip_username`, the context prefix and the extension.
  assert.match(table.get("user name (and auth user)")!, "`sip_username`");
  assert.match(table.get("user name (and auth user)")!, "`org_<uuid>_1001`");
  assert.is(user.sip_username, `${org.prefix}${guideBody("POST", "/users").extension}`);
  assert.match(user.sip_username, /^org_[0-9a-f-]{36}_1001$/);
  assert.match(table.get("password")!, "`sip_password`");
  // Realm: what the engine challenges with (the stored digest is over it).
  const realm = /^`([^`]+)`$/.exec(table.get("realm")!)?.[1];
  assert.is(realm, "pbxctl");
  assert.match(
    await engine.cli(`pjsip show auth ${user.sip_username}`),
    new RegExp(`realm +: ${realm}\\b`),
  );
  // Registrar and transport.
  assert.match(table.get("domain / registrar")!, "`$SIP_ADDRESS`, port `5060`");
  assert.match(table.get("transport")!, /^UDP\b/);

  const phone = await startBaresip({
    user: user.sip_username,
    password: user.sip_password,
    // The guide's port 5060; the engine suite's engine listens on a free port instead.
    registrar: `${SIP_ADDRESS}:${engine.sipPort}`,
  });
  const carrier = await startBaresip({
    user: "carrier",
    password: "unused",
    registrar: `${SIP_ADDRESS}:${engine.sipPort}`,
    listenHost: CARRIER_ADDRESS,
    register: false,
  });
  try {
    const registered = await phone.waitForEvent((e) => /^REGISTER_(OK|FAIL)$/.test(e.type));
    assert.is(registered.type, "REGISTER_OK", JSON.stringify(registered));
    const since = engine.log().length;
    // §3: the carrier sends the DID as the request-URI user, from its own address.
    await carrier.command("dial", `sip:${did.number}@${SIP_ADDRESS}:${engine.sipPort}`);
    const ringing = await phone.waitForEvent((e) => e.type === "CALL_INCOMING");
    assert.ok(ringing, "the softphone rings");
    const log = engine.log().slice(since);
    assert.match(
      log,
      new RegExp(`Executing \\[\\+?${did.number.replace("+", "")}@gateway-inbound:1\\]`),
    );
    assert.match(log, `@${org.prefix}incoming:`);
    await carrier.command("hangup");
  } finally {
    await carrier.stop();
    await phone.stop();
  }
});

test.run();
