// The fake AMI gives only answers a real Asterisk 22 gave (fixtures/ami/session.json and the other
// recordings, `npm run record:ami`): the session answers word for word, an action or command
// nobody recorded refused as the engine refuses it, and "already in progress" only where the
// engine can say it (a `module reload`, never a `dialplan reload` or `queue reload`).
import { connect, type Socket } from "node:net";
import { test } from "uvu";
import * as assert from "uvu/assert";
import {
  answersFor,
  recordedSession,
  sessionAnswer,
} from "../../src/engine/testing/ami-transcript.js";
import { FakeAmiServer } from "../../src/engine/testing/fake-ami.js";

/** A raw client: the banner, then each answer to `send` as its `Key: value` lines (ActionID out). */
async function rawClient(port: number) {
  const socket: Socket = connect(port, "127.0.0.1");
  socket.setEncoding("utf8");
  let text = "";
  let closed = false;
  socket.on("data", (chunk: string) => {
    text += chunk;
  });
  socket.on("close", () => {
    closed = true;
  });
  const waitFor = async (check: () => boolean) => {
    for (let i = 0; i < 600 && !check(); i++) await new Promise((r) => setTimeout(r, 5));
    assert.ok(check(), `no answer in: ${JSON.stringify(text)}`);
  };
  await waitFor(() => text.includes("\r\n"));
  const banner = text.slice(0, text.indexOf("\r\n"));
  text = text.slice(banner.length + 2);
  let next = 0;
  return {
    banner,
    get closed() {
      return closed;
    },
    /** Sends one action; resolves with its messages once `count` carry its ActionID. */
    async send(fields: Record<string, string>, count = 1): Promise<Record<string, string>[]> {
      const id = `t-${++next}`;
      const lines = Object.entries({ ...fields, ActionID: id }).map(([k, v]) => `${k}: ${v}`);
      socket.write(`${lines.join("\r\n")}\r\n\r\n`);
      const mine = () =>
        text
          .split("\r\n\r\n")
          .filter((block) => block.split("\r\n").includes(`ActionID: ${id}`))
          .map((block) =>
            Object.fromEntries(
              block
                .split("\r\n")
                .map((line) => [
                  line.slice(0, line.indexOf(":")),
                  line.slice(line.indexOf(":") + 2),
                ])
                .filter(([key]) => key !== "ActionID"),
            ),
          );
      await waitFor(() => mine().length >= count);
      return mine();
    },
    async waitClosed() {
      await waitFor(() => closed);
    },
    end: () => socket.destroy(),
  };
}

const recorded = (action: string, which: string) => sessionAnswer(action, which)!.messages;

test("the session answers are the recorded ones: banner, Login, Ping, refusals, Logoff", async () => {
  const ami = new FakeAmiServer();
  const port = await ami.listen();
  try {
    const stranger = await rawClient(port);
    assert.is(stranger.banner, recordedSession().banner);
    assert.equal(
      await stranger.send({ Action: "Command", Command: "dialplan reload" }),
      recorded("Command", "not logged in"),
    );
    assert.equal(
      await stranger.send({ Action: "Login", Username: "pbxctl", Secret: "wrong" }),
      recorded("Login", "bad secret"),
    );
    await stranger.waitClosed();
    assert.ok(sessionAnswer("Login", "bad secret")!.closes, "Asterisk hangs up, so does the fake");

    const client = await rawClient(port);
    assert.equal(
      await client.send({ Action: "Login", Username: "pbxctl", Secret: "secret" }),
      recorded("Login", "ok"),
    );
    const [pong] = await client.send({ Action: "Ping" });
    assert.equal(Object.keys(pong!), Object.keys(recorded("Ping", "ok")[0]!));
    assert.match(pong!.Timestamp!, /^\d+\.\d{6}$/);
    assert.equal(
      await client.send({ Action: "CoreShowChannels" }, 2),
      recorded("CoreShowChannels", "no channels"),
    );
    assert.equal(
      await client.send({ Action: "PJSIPShowRegistrationsOutbound" }, 2),
      recorded("PJSIPShowRegistrationsOutbound", "no registrations"),
    );
    assert.equal(await client.send({ Action: "Logoff" }), recorded("Logoff", "ok"));
    await client.waitClosed();
  } finally {
    await ami.close();
  }
});

test("anything not recorded is refused as the engine refuses it", async () => {
  const ami = new FakeAmiServer();
  const port = await ami.listen();
  const client = await rawClient(port);
  try {
    await client.send({ Action: "Login", Username: "pbxctl", Secret: "secret" });
    const unknown = recorded("{name}", "unknown action")[0]!;
    for (const action of ["CoreShowChannelsFast", "DialplanExtensionAdd", "Reload"]) {
      assert.equal(await client.send({ Action: action }), [
        { ...unknown, Message: unknown.Message!.replace("{name}", action) },
      ]);
    }
    // A command nobody recorded: the engine's "No such command" answer (its help hint names
    // the words Asterisk's own command table matched, which the fake cannot know).
    const noSuch = answersFor("no such thing")!.answers[0]!;
    const [command] = await client.send({ Action: "Command", Command: "core restart now" });
    assert.is(command!.Response, noSuch.response);
    assert.is(command!.Message, noSuch.message);
    assert.match(
      command!.Output ?? "",
      /^No such command 'core restart now' \(type 'core show help /,
    );
  } finally {
    client.end();
    await ami.close();
  }
});

test("only a module reload is refused as already in progress, as the engine refuses it", async () => {
  const ami = new FakeAmiServer();
  const port = await ami.listen();
  const client = await rawClient(port);
  try {
    await client.send({ Action: "Login", Username: "pbxctl", Secret: "secret" });
    ami.refuseNextReloads = 1;
    for (const command of ["dialplan reload", "queue reload all"]) {
      const [answer] = await client.send({ Action: "Command", Command: command });
      assert.not.match(answer!.Output ?? "", /in progress/, command);
    }
    const busy = recordedSession().commands.find((c) => c.case === "busy")!;
    const [refused] = await client.send({
      Action: "Command",
      Command: "module reload res_pjsip.so",
    });
    assert.equal(refused, {
      Response: busy.response,
      Message: busy.message,
      Output: busy.output[0]!,
    });
    assert.is(ami.refuseNextReloads, 0);
  } finally {
    client.end();
    await ami.close();
  }
});

test.run();
