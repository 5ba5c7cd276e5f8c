// The AMI session itself against a real Asterisk 22, recorded into fixtures/ami/session.json
// (UPDATE_GOLDEN=1 or `npm run record:ami` rewrites it) for the fast suite's fake AMI: the banner,
// Login accepted and refused, Logoff, Ping, CoreSettings (the systemname), an action before Login, an action the user's write
// classes do not allow, an action Asterisk does not have, the lists pbxctl asks for with nothing
// to list (CoreShowChannels, PJSIPShowRegistrationsOutbound), and what a reload answers while
// another one runs: `module reload` goes through the loader's reload lock (main/loader.c
// `ast_mutex_trylock(&reloadlock)`) and is refused "already in progress"; `dialplan reload` and
// `queue reload` call their module directly and wait instead, so they are never refused.
import { readFile, writeFile } from "node:fs/promises";
import { connect, type Socket } from "node:net";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import {
  type AmiSessionTranscript,
  SESSION_FILE,
  type SessionAnswer,
  sessionTemplateOf,
  type TranscriptAnswer,
} from "../../src/engine/testing/ami-transcript.js";
import { compileYaml, withEngine } from "./helpers.js";

const MD5 = "5f4dcc3b5aa765d61d8327deb882cf99";
// Enough endpoints that one `module reload res_pjsip.so` takes long enough for a second
// connection to arrive while it holds the loader's reload lock.
const ENDPOINTS = 3000;

function slowPjsipOrg(): string {
  const users = Array.from(
    { length: ENDPOINTS },
    (_, i) => `{ extension: "${10000 + i}", name: User ${i}, sip: { md5_cred: ${MD5} } }`,
  );
  return `
org: { id: aaaaaaaa-0000-4000-8000-000000000001, name: Org A, context_prefix: orga_ }
users: [${users.join(", ")}]
queues: [{ number: "600", name: Queue 600 }]
`;
}

type Message = Array<[string, string]>;

/** A raw AMI client: the exact headers Asterisk sends, in order, and whether it hangs up. */
class RawAmi {
  readonly banner: Promise<string>;
  private buffer = "";
  private readonly messages: Message[] = [];
  private waiters: Array<() => void> = [];
  closed = false;
  private readonly socket: Socket;

  constructor(port: number) {
    this.socket = connect(port, "127.0.0.1");
    this.socket.setEncoding("utf8");
    this.socket.on("error", () => {});
    this.socket.on("close", () => {
      this.closed = true;
      this.wake();
    });
    let resolveBanner: (line: string) => void;
    this.banner = new Promise((resolve) => {
      resolveBanner = resolve;
    });
    let bannerRead = false;
    this.socket.on("data", (chunk: string) => {
      this.buffer += chunk;
      if (!bannerRead) {
        const end = this.buffer.indexOf("\r\n");
        if (end < 0) return;
        bannerRead = true;
        resolveBanner(this.buffer.slice(0, end));
        this.buffer = this.buffer.slice(end + 2);
      }
      for (;;) {
        const end = this.buffer.indexOf("\r\n\r\n");
        if (end < 0) break;
        const block = this.buffer.slice(0, end);
        this.buffer = this.buffer.slice(end + 4);
        this.messages.push(
          block.split("\r\n").map((line) => {
            const colon = line.indexOf(":");
            return [line.slice(0, colon), line.slice(colon + 1).trim()] as [string, string];
          }),
        );
      }
      this.wake();
    });
  }

  private wake(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const wake of waiters) wake();
  }

  /** Sends one action and resolves with every message carrying its ActionID, up to `last`. */
  async send(
    fields: Record<string, string>,
    last: (message: Message) => boolean = () => true,
  ): Promise<Message[]> {
    const id = `rec-${Math.random().toString(36).slice(2)}`;
    const lines = Object.entries({ ...fields, ActionID: id }).map(([k, v]) => `${k}: ${v}`);
    this.socket.write(`${lines.join("\r\n")}\r\n\r\n`);
    const mine: Message[] = [];
    for (;;) {
      for (let i = 0; i < this.messages.length; i++) {
        const message = this.messages[i]!;
        if (!message.some(([k, v]) => k === "ActionID" && v === id)) continue;
        this.messages.splice(i--, 1);
        mine.push(message);
        if (last(message)) return mine;
      }
      if (this.closed) return mine;
      await new Promise<void>((resolve) => this.waiters.push(resolve));
    }
  }

  /** Resolves once Asterisk has closed the connection (or after `ms`, with false). */
  async closedWithin(ms: number): Promise<boolean> {
    const deadline = performance.now() + ms;
    while (!this.closed && performance.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    return this.closed;
  }

  end(): void {
    this.socket.destroy();
  }
}

const isEvent = (name: string) => (message: Message) =>
  message.some(([k, v]) => k === "Event" && v === name);

/** Logs in as `username` and returns the client. */
async function loggedIn(port: number, username: string, secret: string): Promise<RawAmi> {
  const ami = new RawAmi(port);
  await ami.banner;
  const [answer] = await ami.send({ Action: "Login", Username: username, Secret: secret });
  assert.ok(
    answer?.some(([k, v]) => k === "Response" && v === "Success"),
    `login as ${username}: ${JSON.stringify(answer)}`,
  );
  return ami;
}

test("the AMI session answers as fixtures/ami/session.json records", async () => {
  await withEngine(compileYaml(slowPjsipOrg()), async (engine) => {
    const port = engine.amiPort;
    const answers: SessionAnswer[] = [];
    const record = (
      action: string,
      which: string,
      messages: Message[],
      closes: boolean,
      name?: string,
    ) => answers.push(sessionTemplateOf({ action, case: which, messages, closes, name }));

    // A user whose write classes do not include `command` (manager.conf reloaded to add it).
    const managerConf = join(engine.etcDir, "manager.conf");
    await writeFile(
      managerConf,
      `${await readFile(managerConf, "utf8")}\n[watcher]\nsecret = watcher-secret\ndeny = 0.0.0.0/0.0.0.0\npermit = 127.0.0.1/255.255.255.255\nread = system\nwrite = system\n`,
    );
    await engine.cli("manager reload");

    const first = new RawAmi(port);
    const banner = await first.banner;
    record(
      "Command",
      "not logged in",
      await first.send({ Action: "Command", Command: "core show uptime" }),
      false,
    );
    record(
      "Login",
      "bad secret",
      await first.send({ Action: "Login", Username: engine.amiUsername, Secret: "wrong" }),
      await first.closedWithin(3000),
    );
    first.end();

    const ami = new RawAmi(port);
    await ami.banner;
    record(
      "Login",
      "ok",
      await ami.send({ Action: "Login", Username: engine.amiUsername, Secret: engine.amiSecret }),
      false,
    );
    record("Ping", "ok", await ami.send({ Action: "Ping" }), false);
    // The systemname pbxctl reads at each node's connect (docs/nodes.md); this engine has none,
    // and the fake answers with its own in `SystemName`.
    record("CoreSettings", "ok", await ami.send({ Action: "CoreSettings" }), false);
    record(
      "NoSuchAction",
      "unknown action",
      await ami.send({ Action: "NoSuchAction" }),
      false,
      "NoSuchAction",
    );
    record(
      "CoreShowChannels",
      "no channels",
      await ami.send({ Action: "CoreShowChannels" }, isEvent("CoreShowChannelsComplete")),
      false,
    );
    record(
      "PJSIPShowRegistrationsOutbound",
      "no registrations",
      await ami.send(
        { Action: "PJSIPShowRegistrationsOutbound" },
        (message) =>
          isEvent("OutboundRegistrationDetailComplete")(message) ||
          message.some(([k, v]) => k === "Response" && v === "Error"),
      ),
      false,
    );

    const watcher = await loggedIn(port, "watcher", "watcher-secret");
    record(
      "Command",
      "no write permission",
      await watcher.send({ Action: "Command", Command: "core show uptime" }),
      false,
    );
    watcher.end();

    // Two reloads at once: connection A reloads res_pjsip (thousands of endpoints, slow); while
    // it runs, connection B asks for each reload the deployer sends.
    const other = await loggedIn(port, engine.amiUsername, engine.amiSecret);
    const during: TranscriptAnswer[] = [];
    const commandAnswer = (command: string, which: string, messages: Message[]) => {
      const headers = messages[0] ?? [];
      const get = (key: string) => headers.find(([k]) => k === key)?.[1] ?? "";
      return {
        command,
        case: which,
        response: get("Response"),
        message: get("Message"),
        output: headers.filter(([k]) => k === "Output").map(([, v]) => v),
      };
    };
    // The loader takes its lock as the command starts: ask until the refusal comes. On a fast
    // machine the slow reload can end before a second command lands; then start it again, a
    // bounded number of times (each try is one res_pjsip reload, well under a second).
    let slow: Promise<Message[]> = Promise.resolve([]);
    let busy: Message[] | null = null;
    for (let attempt = 0; attempt < 20 && !busy; attempt++) {
      slow = ami.send({ Action: "Command", Command: "module reload res_pjsip.so" });
      let slowDone = false;
      void slow.then(() => {
        slowDone = true;
      });
      while (!slowDone && !busy) {
        const answer = await other.send({
          Action: "Command",
          Command: "module reload app_voicemail.so",
        });
        if (/already in progress/.test(JSON.stringify(answer))) busy = answer;
      }
      if (!busy) await slow;
    }
    assert.ok(
      busy,
      `a module reload during another one was never refused in 20 tries (${ENDPOINTS} endpoints)`,
    );
    during.push(commandAnswer("module reload {name}", "busy", busy));
    // The same moment for the reloads that do not take the loader's lock: they wait, and succeed.
    const again = ami.send({ Action: "Command", Command: "module reload res_pjsip.so" });
    for (const command of ["dialplan reload", "queue reload all"]) {
      const answer = await other.send({ Action: "Command", Command: command });
      during.push(commandAnswer(command, "during a module reload", answer));
    }
    await slow;
    await again;
    other.end();

    record("Logoff", "ok", await ami.send({ Action: "Logoff" }), await ami.closedWithin(3000));
    ami.end();

    const recorded: AmiSessionTranscript = {
      engine: (await engine.cli("core show version")).trim().split(" ").slice(0, 2).join(" "),
      banner,
      answers,
      commands: during,
    };
    if (process.env.UPDATE_GOLDEN === "1") {
      await writeFile(SESSION_FILE, `${JSON.stringify(recorded, null, 2)}\n`);
    }
    const expected = JSON.parse(await readFile(SESSION_FILE, "utf8")) as AmiSessionTranscript;
    assert.equal(
      recorded,
      expected,
      "the engine answers differently from fixtures/ami/session.json; rerun with UPDATE_GOLDEN=1 (npm run record:ami) and review git diff fixtures/ami",
    );
  });
});

test.run();
