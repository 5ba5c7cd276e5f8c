import { type AddressInfo, connect, createServer } from "node:net";
import { test } from "uvu";
import * as assert from "uvu/assert";
import {
  amiOptionsFrom,
  engineKindFrom,
  engineSettingsFrom,
  resolveEnginePaths,
} from "../../src/config.js";
import {
  AMI_MAX_LINE_BYTES,
  AmiConnection,
  AmiUnreachableError,
} from "../../src/engine/ami-connection.js";
import { createAmiTarget } from "../../src/engine/ami-target.js";
import {
  createEngineTarget,
  EngineConfigError,
  EngineUnavailableError,
  engineHealthProbe,
} from "../../src/engine/index.js";
import { EngineCommandError } from "../../src/engine/target.js";
import { FakeAmiServer } from "../../src/engine/testing/fake-ami.js";

const credentials = { host: "127.0.0.1", username: "pbxctl", secret: "secret" };

async function until(check: () => boolean, what: string, timeoutMs = 3000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

test("a line over 1,022 bytes: the fake refuses it as Asterisk does, the connection never sends one", async () => {
  const ami = new FakeAmiServer();
  const port = await ami.listen();
  const socket = connect(port, "127.0.0.1");
  socket.setEncoding("utf8");
  let text = "";
  socket.on("data", (chunk: string) => {
    text += chunk;
  });
  const connection = new AmiConnection({ ...credentials, port });
  try {
    const command = (bytes: number) =>
      `queue reload all ${"q".repeat(bytes - "Command: queue reload all ".length)}`;
    socket.write("Action: Login\r\nActionID: a1\r\nUsername: pbxctl\r\nSecret: secret\r\n\r\n");
    socket.write(
      `Action: Command\r\nActionID: a2\r\nCommand: ${command(AMI_MAX_LINE_BYTES + 1)}\r\n\r\n`,
    );
    socket.write(
      `Action: Command\r\nActionID: a3\r\nCommand: ${command(AMI_MAX_LINE_BYTES)}\r\n\r\n`,
    );
    await until(() => text.includes("ActionID: a3"), "both answers");
    await until(() => text.endsWith("\r\n\r\n"), "end of message");
    assert.match(
      text,
      "Response: Error\r\nActionID: a2\r\nMessage: Failed to parse message: line too long\r\n\r\n",
    );
    assert.not.match(text, /ActionID: a3\r\nMessage: Failed to parse/);

    const before = ami.received.length;
    try {
      await connection.action({ Action: "Command", Command: command(AMI_MAX_LINE_BYTES + 1) });
      assert.unreachable("sent a line AMI cannot read");
    } catch (error) {
      assert.instance(error, EngineCommandError);
      assert.match((error as Error).message, "over the 1022 bytes AMI accepts");
    }
    assert.is(ami.received.length, before, "nothing reached the engine");
  } finally {
    socket.destroy();
    await connection.close();
    await ami.close();
  }
});

test("the fake server speaks AMI: banner, login, ActionID echo, CRLF blank-line messages", async () => {
  const ami = new FakeAmiServer();
  const port = await ami.listen();
  const socket = connect(port, "127.0.0.1");
  socket.setEncoding("utf8");
  let text = "";
  socket.on("data", (chunk: string) => {
    text += chunk;
  });
  try {
    await until(() => text.includes("\r\n"), "banner");
    assert.is(text, "Asterisk Call Manager/11.0.0\r\n", "Asterisk 22's banner (session.json)");
    socket.write("Action: Login\r\nActionID: a1\r\nUsername: pbxctl\r\nSecret: secret\r\n\r\n");
    socket.write("Action: Ping\r\nActionID: a2\r\n\r\n");
    socket.write("Action: Command\r\nActionID: a3\r\nCommand: dialplan reload\r\n\r\n");
    await until(() => text.includes("ActionID: a3"), "command answer");
    await until(() => text.endsWith("\r\n\r\n"), "end of message");
    assert.match(
      text,
      "Response: Success\r\nActionID: a1\r\nMessage: Authentication accepted\r\n\r\n",
    );
    assert.match(
      text,
      /Response: Success\r\nActionID: a2\r\nPing: Pong\r\nTimestamp: [\d.]+\r\n\r\n/,
    );
    assert.match(
      text,
      "Response: Success\r\nActionID: a3\r\nMessage: Command output follows\r\nOutput: Dialplan reloaded.\r\n\r\n",
    );
    assert.equal(
      ami.received.map((a) => a.action),
      ["Login", "Ping", "Command"],
    );
    assert.ok(ami.received.every((a) => typeof a.at === "number"));
  } finally {
    socket.destroy();
    await ami.close();
  }
});

test("the AMI target runs a reload as Action: Command and checks health with Ping and uptime", async () => {
  const ami = new FakeAmiServer();
  const target = createAmiTarget({ ...credentials, port: await ami.listen() });
  try {
    const outcome = await target.reload({
      command: { module: "dialplan", command: "dialplan reload" },
      units: ["org:org_acme_"],
    });
    assert.is(outcome.status, "ok");
    assert.is(outcome.output, "Dialplan reloaded.");
    const health = await target.health();
    assert.is(health.status, "healthy");
    assert.match(health.uptime ?? "", /^System uptime: \d+$/);
    const actions = ami.received.map((a) => `${a.action} ${a.fields.Command ?? ""}`.trim());
    assert.equal(actions, ["login", "Command dialplan reload", "Ping", "Command core show uptime"]);
  } finally {
    await target.close();
    await ami.close();
  }
});

test("a slow reload outlives the action timeout: reloads have their own, long one", async () => {
  const ami = new FakeAmiServer({ reloadDelayMs: 150 });
  const target = createAmiTarget({ ...credentials, port: await ami.listen(), actionTimeoutMs: 50 });
  try {
    const outcome = await target.reload({
      command: { module: "pjsip", command: "module reload res_pjsip.so" },
      units: [],
    });
    assert.is(outcome.status, "ok");
    assert.ok(outcome.durationMs >= 100);
  } finally {
    await target.close();
    await ami.close();
  }
});

test("an unknown command is a failed outcome, not a crash", async () => {
  const ami = new FakeAmiServer();
  const target = createAmiTarget({ ...credentials, port: await ami.listen() });
  try {
    const outcome = await target.reload({
      command: { module: "dialplan", command: "no such thing" },
      units: [],
    });
    assert.is(outcome.status, "failed");
    assert.match(outcome.error ?? "", /No such command/);
  } finally {
    await target.close();
    await ami.close();
  }
});

test("the connection comes back after the server drops it", async () => {
  const ami = new FakeAmiServer();
  const port = await ami.listen();
  const connection = new AmiConnection({ ...credentials, port, reconnectInitialMs: 10 });
  try {
    connection.start();
    await connection.ready();
    assert.is(connection.logins, 1);
    ami.dropConnections();
    await until(() => !connection.isReady, "disconnect");
    // An action sent while disconnected waits for the new login instead of being lost.
    const answer = await connection.action({ Action: "Ping" });
    assert.is(answer.ping, "Pong");
    assert.is(connection.logins, 2);
    assert.is(ami.logins, 2);
  } finally {
    await connection.close();
    await ami.close();
  }
});

test("the connection retries with backoff until the engine is up", async () => {
  const ami = new FakeAmiServer();
  const port = await ami.listen();
  await ami.close(); // nothing listens on the port for now
  const connection = new AmiConnection({ ...credentials, port, reconnectInitialMs: 10 });
  const later = new FakeAmiServer();
  try {
    connection.start();
    await new Promise((r) => setTimeout(r, 50));
    assert.not.ok(connection.isReady);
    await later.listen(port);
    await connection.ready(3000);
    assert.ok(connection.isReady);
  } finally {
    await connection.close();
    await later.close();
  }
});

test("a wrong secret fails actions with a clear error and no crash", async () => {
  const ami = new FakeAmiServer();
  const connection = new AmiConnection({
    ...credentials,
    secret: "wrong",
    port: await ami.listen(),
    reconnectInitialMs: 10,
    actionTimeoutMs: 200,
  });
  try {
    try {
      await connection.action({ Action: "Ping" });
      assert.unreachable("should not be connected");
    } catch (error) {
      assert.instance(error, EngineUnavailableError);
      assert.match((error as Error).message, /login refused/);
    }
    assert.ok(!ami.received.some((a) => a.action === "Ping"), "no action sent before login");
  } finally {
    await connection.close();
    await ami.close();
  }
});

test("reach() fails on the first refused connection, once, naming host:port and what to check", async () => {
  const ami = new FakeAmiServer();
  const port = await ami.listen();
  await ami.close(); // nothing listens there
  // A reconnect delay far beyond the test: only the first attempt can answer.
  const connection = new AmiConnection({ ...credentials, port, reconnectInitialMs: 60_000 });
  const lines: string[] = [];
  try {
    await connection.reach();
    assert.unreachable("nothing listens");
  } catch (error) {
    assert.instance(error, AmiUnreachableError);
    lines.push((error as Error).message);
  } finally {
    await connection.close();
  }
  assert.is(lines.length, 1);
  const [message] = lines;
  assert.match(message!, `cannot reach Asterisk's AMI at 127.0.0.1:${port}: connection refused`);
  assert.match(message!, "Is Asterisk running");
  assert.match(message!, "PBX_AMI_PORT");
  assert.match(message!, "manager.conf");
});

test("reach() gives up after its timeout when the port answers nothing, and on a refused login", async () => {
  // Accepts TCP and never greets: an AMI port behind a firewall's tarpit, or not Asterisk.
  // It reads (and drops) what it gets, so it sees the client's end and lets the socket close.
  const silent = createServer((socket) => socket.resume());
  await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
  const port = (silent.address() as AddressInfo).port;
  const connection = new AmiConnection({ ...credentials, port, connectTimeoutMs: 50 });
  try {
    await connection.reach();
    assert.unreachable("no login");
  } catch (error) {
    assert.instance(error, AmiUnreachableError);
    assert.match((error as Error).message, `AMI at 127.0.0.1:${port}: no AMI login within 50 ms`);
  } finally {
    await connection.close();
    silent.close();
  }
  const ami = new FakeAmiServer();
  const refused = new AmiConnection({
    ...credentials,
    secret: "wrong",
    port: await ami.listen(),
    reconnectInitialMs: 60_000,
  });
  try {
    await refused.reach();
    assert.unreachable("wrong secret");
  } catch (error) {
    assert.match((error as Error).message, /refused the login .*PBX_AMI_SECRET/);
  } finally {
    await refused.close();
    await ami.close();
  }
});

test("a connection dropped during an action fails that action", async () => {
  const ami = new FakeAmiServer({ reloadDelayMs: 200 });
  const connection = new AmiConnection({ ...credentials, port: await ami.listen() });
  try {
    const pending = connection.action({ Action: "Command", Command: "dialplan reload" });
    await until(() => ami.received.some((a) => a.action === "Command"), "command sent");
    ami.dropConnections();
    try {
      await pending;
      assert.unreachable("should fail");
    } catch (error) {
      assert.instance(error, EngineUnavailableError);
    }
  } finally {
    await connection.close();
    await ami.close();
  }
});

test("events from the engine reach listeners when events are on", async () => {
  const ami = new FakeAmiServer();
  const connection = new AmiConnection({ ...credentials, port: await ami.listen(), events: true });
  const seen: string[] = [];
  connection.onEvent((event) => seen.push(String(event.event)));
  try {
    await connection.ready();
    ami.emitEvent({ Event: "FullyBooted", Status: "Fully Booted" });
    await until(() => seen.length > 0, "event");
    assert.equal(seen, ["FullyBooted"]);
  } finally {
    await connection.close();
    await ami.close();
  }
});

test("engine settings come from the environment", () => {
  assert.is(engineKindFrom({}), "none");
  assert.is(engineKindFrom({ PBX_ENGINE: "ami" }), "ami");
  assert.throws(() => engineKindFrom({ PBX_ENGINE: "sip" }), /must be one of none, ami/);
  assert.equal(amiOptionsFrom({ PBX_AMI_USERNAME: "u", PBX_AMI_SECRET: "s" }), {
    host: "127.0.0.1",
    port: 5038,
    username: "u",
    secret: "s",
  });
  assert.throws(
    () => amiOptionsFrom({ PBX_AMI_USERNAME: "u" }),
    (error: Error) => error instanceof EngineConfigError,
  );
  assert.throws(
    () => amiOptionsFrom({ PBX_AMI_USERNAME: "u", PBX_AMI_SECRET: "s", PBX_AMI_PORT: "x" }),
    /PBX_AMI_PORT/,
  );
  assert.equal(engineSettingsFrom({}), { kind: "none" });
  assert.equal(engineSettingsFrom({ PBX_AMI_USERNAME: "u", PBX_AMI_SECRET: "s" }, "ami"), {
    kind: "ami",
    ami: { host: "127.0.0.1", port: 5038, username: "u", secret: "s" },
  });
  assert.throws(
    () => engineSettingsFrom({ PBX_ENGINE: "ami" }),
    /the ami engine needs PBX_AMI_USERNAME and PBX_AMI_SECRET/,
  );
  assert.is(createEngineTarget(engineSettingsFrom({})).kind, "none");
  const paths = resolveEnginePaths({}, "/data");
  assert.equal(paths, {
    asteriskDir: "/data/asterisk",
    soundsDir: "/data/sounds",
    recordingsDir: "/data/recordings",
    nodesDir: "/data/nodes",
  });
  assert.equal(
    resolveEnginePaths(
      {
        PBX_ASTERISK_DIR: "/etc/asterisk/pbx",
        PBX_SOUNDS_DIR: "/snd",
        PBX_RECORDINGS_DIR: "/var/spool/asterisk/monitor",
        PBX_NODES_DIR: "/srv/pbx-nodes",
      },
      "/data",
    ),
    {
      asteriskDir: "/etc/asterisk/pbx",
      soundsDir: "/snd",
      recordingsDir: "/var/spool/asterisk/monitor",
      nodesDir: "/srv/pbx-nodes",
    },
  );
});

test("the health probe says files-only, connected or disconnected", async () => {
  assert.is(engineHealthProbe(createEngineTarget({ kind: "none" }))(), "files-only");
  const ami = new FakeAmiServer();
  const target = createAmiTarget({
    ...credentials,
    port: await ami.listen(),
    reconnectInitialMs: 1000,
  });
  try {
    const probe = engineHealthProbe(target);
    await target.connection.ready();
    assert.is(probe(), "connected");
    ami.dropConnections();
    await until(() => probe() === "disconnected", "disconnected");
  } finally {
    await target.close();
    await ami.close();
  }
});

test.run();
