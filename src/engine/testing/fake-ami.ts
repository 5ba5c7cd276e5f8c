// A fake Asterisk Manager Interface for tests and the deploy bench: a real TCP server speaking
// the AMI wire protocol (banner, Login, ActionID echo, CRLF messages ending in a blank line,
// Asterisk 22 style `Command` answers with `Output:` lines). It records every action with a
// timestamp and can make reloads slow or refuse them as "already in progress".
//
// Every answer it gives was recorded from a real Asterisk 22 (fixtures/ami/*.json, written by
// the engine suite; `npm run record:ami` records them again): the session (banner, Login, Logoff,
// Ping, the refusals) from session.json, the commands from asterisk-22.json, the call-control and
// realtime actions from their own files. An action nobody recorded gets the engine's answer to
// an unknown action, a command nobody recorded its "No such command"; a message with a line
// longer than the engine reads is refused as the engine refuses it (`line too long`). Given the engine directory, it also "loads" the generated files at
// each reload the way Asterisk does (reading stops at an `#include` of a missing file), so the
// deployer's after-reload checks (`dialplan show`, `pjsip show endpoint`, `queue show`) see
// what a real engine would.
import { type AddressInfo, createServer, type Server, type Socket } from "node:net";
import { AMI_MAX_LINE_BYTES } from "../ami-connection.js";
import { CONTEXT_PROBE_EXTENSION } from "../ami-target.js";
import {
  answersFor,
  fill,
  fillOutput,
  recordedActionAnswer,
  recordedSession,
  type SessionAnswer,
  sessionAnswer,
  type TranscriptAnswer,
} from "./ami-transcript.js";
import { FakeEngineConfig } from "./fake-engine-config.js";

export interface ReceivedAction {
  /** Action name as sent (`Login`, `Command`, `Ping`, ...). */
  action: string;
  /** All headers, keys as sent. */
  fields: Record<string, string>;
  /** `performance.now()` when the action arrived. */
  at: number;
  connection: number;
}

/** One reload command the fake ran, with when it started and answered. */
export interface ReloadSpan {
  command: string;
  start: number;
  end: number;
}

export interface FakeAmiOptions {
  username?: string;
  secret?: string;
  /** How long each reload command takes before it is answered. */
  reloadDelayMs?: number;
  /**
   * The engine config directory whose generated files the fake "loads" at each reload. Without
   * it, every object a probe asks about counts as loaded.
   */
  engineDir?: string;
  /** With `engineDir`: a missing top-level file means "every org's file" (org-unit tests). */
  implicitIncludes?: boolean;
  /**
   * Realtime PJSIP (issue 24): whether the database has an endpoint row with this id. Given, the
   * fake serves endpoints as a realtime engine with a memory cache does: `pjsip show endpoint`
   * finds a row (or a file endpoint) and caches it; a cached endpoint is shown even after its
   * row is gone, until `SorceryMemoryCacheExpireObject` drops it.
   */
  realtimeEndpoint?: (id: string) => Promise<boolean>;
  /** The `systemname` CoreSettings answers (asterisk.conf [options]); default none (empty). */
  systemName?: string;
}

/** The memory caches `engine init --pjsip realtime` sets up (res_sorcery_memory_cache's names). */
const SORCERY_CACHES = ["res_pjsip/endpoint", "res_pjsip/auth", "res_pjsip/aor"];

/** The transcript's entry for a message with a line longer than AMI reads. */
export const LONG_LINE = "(any line over 1022 bytes)";
const RELOAD = /^(dialplan reload|module (?:reload|refresh) \S+|queue reload\b.*|moh reload)$/;

export class FakeAmiServer {
  readonly received: ReceivedAction[] = [];
  readonly reloads: ReloadSpan[] = [];
  /** Reload commands that arrived while another was still running (a deployer bug). */
  overlaps = 0;
  reloadDelayMs: number;
  /**
   * The next N reload commands Asterisk can refuse as "already in progress" are refused so, as
   * recorded (session.json `busy`). Only `module reload` takes the loader's reload lock; a
   * `dialplan reload` or `queue reload` waits for its module instead and is never refused.
   */
  refuseNextReloads = 0;
  /**
   * A channel is in a queue application: Asterisk refuses to unload app_queue (soft unload, use
   * count), so `module refresh app_queue.so` is answered as recorded for a refused unload.
   */
  queueInUse = false;
  private readonly server: Server;
  private readonly sockets = new Set<Socket>();
  private readonly authenticated = new WeakSet<Socket>();
  private running = 0;
  private connections = 0;
  private readonly username: string;
  private readonly secret: string;
  /** What the fake engine has loaded (null: no engine directory, everything counts as there). */
  readonly config: FakeEngineConfig | null;
  /** Realtime PJSIP: the objects each memory cache holds (`<cache>/<id>`). */
  readonly sorceryCached = new Set<string>();
  private readonly realtimeEndpoint: ((id: string) => Promise<boolean>) | null;
  /** What CoreSettings answers as `SystemName`; a test may change it (an engine restarted). */
  systemName: string;
  /** Modules "not loaded" (they declined at boot): their reloads answer "No such command". */
  readonly unloadedModules = new Set<string>();
  /**
   * Channels the fake has "up" for the hold actions (Getvar, Setvar, Redirect, Bridge): their
   * variables, whom each is bridged to and where it runs. Empty: every channel is gone.
   */
  readonly channels = new Map<
    string,
    { vars: Map<string, string>; bridgedWith: string | null; place: string | null }
  >();

  /**
   * What `PJSIPShowRegistrationsOutbound` lists: `OutboundRegistrationDetail` items as Asterisk
   * 22 sent them (fixtures/registrations/trunk-registrations.json `list`). Empty: no registration.
   */
  outboundRegistrations: Record<string, string>[] = [];

  /**
   * Endpoints with a registered contact, for `PJSIPNotify` (`org move`): one of them is answered
   * `NOTIFY sent`, any other name as Asterisk 22 answers an endpoint it does not have
   * (fixtures/ami/call-control.json); `notified` lists the endpoints sent a NOTIFY, in order.
   */
  readonly registeredEndpoints = new Set<string>();
  readonly notified: string[] = [];

  /** Puts two channels up, bridged together (an answered call). */
  addBridgedCall(a: string, b: string): void {
    this.channels.set(a, { vars: new Map(), bridgedWith: b, place: null });
    this.channels.set(b, { vars: new Map(), bridgedWith: a, place: null });
  }

  constructor(options: FakeAmiOptions = {}) {
    this.username = options.username ?? "pbxctl";
    this.secret = options.secret ?? "secret";
    this.reloadDelayMs = options.reloadDelayMs ?? 0;
    this.config = options.engineDir
      ? new FakeEngineConfig(options.engineDir, options.implicitIncludes)
      : null;
    this.realtimeEndpoint = options.realtimeEndpoint ?? null;
    this.systemName = options.systemName ?? "";
    this.server = createServer((socket) => this.accept(socket));
  }

  /** Listens on 127.0.0.1 on a free port and resolves with it. */
  async listen(port = 0): Promise<number> {
    await new Promise<void>((resolve) => this.server.listen(port, "127.0.0.1", resolve));
    return this.port;
  }

  get port(): number {
    return (this.server.address() as AddressInfo).port;
  }

  /** Commands received (`Action: Command`), in order. */
  commands(): string[] {
    return this.received.filter((a) => a.action === "Command").map((a) => a.fields.Command ?? "");
  }

  /** Reload commands received, in order (refused ones included). */
  reloadCommands(): string[] {
    return this.commands().filter((command) => RELOAD.test(command));
  }

  /** Sends an event to every logged-in connection. */
  emitEvent(fields: Record<string, string>): void {
    for (const socket of this.sockets) {
      if (this.authenticated.has(socket)) socket.write(format(fields));
    }
  }

  /** Cuts every open connection (as an Asterisk restart would). */
  dropConnections(): void {
    for (const socket of this.sockets) socket.destroy();
    this.sockets.clear();
  }

  /** Number of connections that logged in so far. */
  get logins(): number {
    return this.received.filter((a) => a.action.toLowerCase() === "login").length;
  }

  async close(): Promise<void> {
    this.dropConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private accept(socket: Socket): void {
    const connection = ++this.connections;
    this.sockets.add(socket);
    socket.setEncoding("utf8");
    socket.write(`${recordedSession().banner}\r\n`);
    let buffer = "";
    socket.on("data", (chunk: string) => {
      buffer += chunk;
      for (;;) {
        const end = buffer.indexOf("\r\n\r\n");
        if (end < 0) break;
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 4);
        const fields = parse(block);
        const action = fields.Action ?? "";
        this.received.push({ action, fields, at: performance.now(), connection });
        if (block.split("\r\n").some((line) => Buffer.byteLength(line) > AMI_MAX_LINE_BYTES)) {
          this.refuseLongLine(socket, fields.ActionID);
          continue;
        }
        void this.answer(socket, action, fields);
      }
    });
    socket.on("close", () => this.sockets.delete(socket));
    socket.on("error", () => {});
  }

  /** Asterisk's answer to a message with a line over its buffer, as recorded. */
  private refuseLongLine(socket: Socket, actionId: string | undefined): void {
    const recorded = answersFor(LONG_LINE)!.answers[0]!;
    const headers = { Response: recorded.response, Message: recorded.message };
    if (!socket.destroyed) socket.write(format(headers, actionId));
  }

  private async answer(socket: Socket, action: string, fields: Record<string, string>) {
    const id = fields.ActionID;
    const reply = (headers: Record<string, string | string[]>) => {
      if (!socket.destroyed) socket.write(format({ Response: "", ...headers }, id));
    };
    /** Sends the recorded exchange (ActionID added) and hangs up where Asterisk hung up. */
    const replay = (answer: SessionAnswer, name = "") => {
      for (const message of answer.messages) {
        const filled = Object.fromEntries(
          Object.entries(message).map(([key, value]) => [key, fillSession(value, name)]),
        );
        if (socket.destroyed) return;
        socket.write("Response" in filled ? format(filled, id) : format(withActionId(filled, id)));
      }
      if (answer.closes) socket.end();
    };
    const session = (which: string) => {
      const answer = sessionAnswer(action, which);
      if (!answer) throw new Error(`fixtures/ami/session.json has no ${action} ${which}`);
      return answer;
    };
    switch (action.toLowerCase()) {
      case "login":
        if (fields.Username === this.username && fields.Secret === this.secret) {
          this.authenticated.add(socket);
          replay(session("ok"));
        } else {
          replay(session("bad secret"));
        }
        return;
      case "logoff":
        replay(session("ok"));
        return;
    }
    if (this.authenticated.has(socket) && action.toLowerCase() === "coresettings") {
      // Asterisk's own answer (recorded from an engine with none), with this fake's systemname.
      const answer = session("ok");
      replay({
        ...answer,
        messages: answer.messages.map((m) => ({ ...m, SystemName: this.systemName })),
      });
      return;
    }
    if (!this.authenticated.has(socket)) {
      replay(sessionAnswer("Command", "not logged in")!);
      return;
    }
    switch (action.toLowerCase()) {
      case "ping":
        replay(session("ok"));
        return;
      case "coreshowchannels":
        // Only the empty list was recorded: the fake's hold channels are not listed.
        replay(session("no channels"));
        return;
      case "command":
        reply(await this.runCommand(fields.Command ?? ""));
        return;
      case "moduleload":
        reply(this.moduleLoad(fields.Module ?? ""));
        return;
      case "sorcerymemorycacheexpireobject": {
        const cache = fields.Cache ?? "";
        const key = `${cache}/${fields.Object ?? ""}`;
        const which = !SORCERY_CACHES.includes(cache)
          ? "no such cache"
          : this.sorceryCached.delete(key)
            ? "expired"
            : "not cached";
        reply(recordedReply(action, which));
        return;
      }
      case "originate":
      case "blindtransfer":
      case "hangup": {
        // The fake has no channels: an Originate is queued, an action on a channel finds none,
        // each answered word for word as Asterisk 22 did (fixtures/ami/call-control.json).
        const which = action.toLowerCase() === "originate" ? "queued" : "no such channel";
        reply(recordedReply(action, which));
        return;
      }
      case "pjsipshowregistrationsoutbound": {
        // The recorded empty list, with the fake's items (as Asterisk 22 sent them, from
        // fixtures/registrations/trunk-registrations.json) between its start and its end.
        const [start, complete] = session("no registrations").messages as [
          Record<string, string>,
          Record<string, string>,
        ];
        reply(start);
        const items = this.outboundRegistrations;
        for (const item of items) {
          const { event: _event, ...fields } = item;
          socket.write(
            format({ Event: "OutboundRegistrationDetail", ActionID: id ?? "", ...fields }),
          );
        }
        const registered = items.filter((item) => item.status === "Registered").length;
        socket.write(
          format(
            withActionId(
              {
                ...complete,
                ListItems: String(items.length),
                Registered: String(registered),
                NotRegistered: String(items.length - registered),
              },
              id,
            ),
          ),
        );
        return;
      }
      case "pjsipnotify": {
        const endpoint = fields.Endpoint ?? "";
        if (!this.registeredEndpoints.has(endpoint)) {
          const refused = recordedReply(action, "no such endpoint");
          reply({
            ...refused,
            Message: (refused.Message ?? "").split("{endpoint}").join(endpoint),
          });
          return;
        }
        this.notified.push(endpoint);
        reply(recordedReply(action, "sent"));
        return;
      }
      case "getvar":
      case "setvar":
      case "redirect":
      case "bridge":
        reply(this.channelAction(action.toLowerCase(), fields));
        return;
      default:
        reply(unknownAction(action));
    }
  }

  /**
   * The hold actions on the fake's channels, answered word for word as Asterisk 22 did
   * (fixtures/ami/call-control.json, `ok` and `no such channel`, `{channel}` filled in).
   */
  private channelAction(action: string, sent: Record<string, string>) {
    // Header names are case-insensitive on the wire; read them by Asterisk's spelling.
    const lower = new Map(Object.entries(sent).map(([k, v]) => [k.toLowerCase(), v]));
    const spelled = [
      "Channel",
      "Channel1",
      "Channel2",
      "ExtraChannel",
      "Variable",
      "Value",
      "Context",
      "Exten",
      "Priority",
      "ExtraContext",
      "ExtraExten",
      "ExtraPriority",
    ];
    const fields: Record<string, string | undefined> = Object.fromEntries(
      spelled.map((name) => [name, lower.get(name.toLowerCase())]),
    );
    const answer = (which: string, channel = "") => recordedReply(action, which, channel);
    const names =
      action === "bridge"
        ? [fields.Channel1 ?? "", fields.Channel2 ?? ""]
        : action === "redirect" && fields.ExtraChannel
          ? [fields.Channel ?? "", fields.ExtraChannel]
          : [fields.Channel ?? ""];
    const gone = names.find((name) => !this.channels.has(name));
    if (gone !== undefined) return answer("no such channel", gone);
    const [first, second] = names.map((name) => this.channels.get(name)!);
    switch (action) {
      case "getvar": {
        const variable = fields.Variable ?? "";
        const value =
          variable === "BRIDGEPEER"
            ? (first!.bridgedWith ?? "")
            : (first!.vars.get(variable) ?? "");
        return { ...answer("ok"), Variable: variable, Value: value };
      }
      case "setvar":
        first!.vars.set(fields.Variable ?? "", fields.Value ?? "");
        return answer("ok");
      case "redirect":
        for (const [i, channel] of [first, second].entries()) {
          if (!channel) continue;
          if (channel.bridgedWith) this.channels.get(channel.bridgedWith)!.bridgedWith = null;
          channel.bridgedWith = null;
          channel.place =
            i === 0
              ? `${fields.Context},${fields.Exten},${fields.Priority}`
              : `${fields.ExtraContext},${fields.ExtraExten},${fields.ExtraPriority}`;
        }
        return answer("ok");
      default:
        first!.bridgedWith = names[1]!;
        second!.bridgedWith = names[0]!;
        first!.place = null;
        second!.place = null;
        return answer("ok");
    }
  }

  private recorded(command: string, which: (answer: TranscriptAnswer) => boolean) {
    const found = answersFor(command);
    const answer = found?.answers.find(which) ?? found?.answers[0];
    if (!found || !answer) return null;
    return {
      Response: answer.response,
      Message: fill(answer.message, found.name),
      Output: fillOutput(answer, found.name),
    };
  }

  /**
   * `moh show classes` as Asterisk answered it: the engine's own classes as recorded, then each
   * org class the fake has loaded, shaped like the org class of the recording (`Class: {name}`
   * and its detail lines, the directory taken from the loaded file).
   */
  private musicClassListing(): Record<string, string | string[]> | null {
    const answer = answersFor("moh show classes")?.answers[0];
    if (!answer) return null;
    const start = answer.output.findIndex((line) => line.includes("{name}"));
    const own = start < 0 ? answer.output : answer.output.slice(0, start);
    const rest = start < 0 ? [] : answer.output.slice(start + 1);
    const next = rest.findIndex((line) => line.startsWith("Class: "));
    const block =
      start < 0 ? [] : answer.output.slice(start, start + 1 + (next < 0 ? rest.length : next));
    const output = [...own];
    for (const [name, directory] of this.config?.classes() ?? []) {
      for (const line of block) {
        output.push(fill(line, name).replace(/^(\s*Directory: ).*$/, `$1${directory}`));
      }
    }
    return { Response: answer.response, Message: answer.message, Output: output };
  }

  /** An endpoint as a realtime engine finds it: from its cache, else a row (then cached), else a file. */
  private async realtimeLookup(id: string): Promise<boolean> {
    const key = `res_pjsip/endpoint/${id}`;
    if (this.sorceryCached.has(key)) return true;
    if (await this.realtimeEndpoint!(id)) {
      this.sorceryCached.add(key);
      return true;
    }
    return this.config ? this.config.has("pjsip show endpoint", id) : false;
  }

  private moduleLoad(module: string): Record<string, string | string[]> {
    const loadedNow = this.unloadedModules.delete(module);
    if (loadedNow) this.config?.loadModule(module);
    const which = loadedNow
      ? "loaded"
      : /^[a-z0-9_]+\.so$/.test(module)
        ? "already loaded"
        : "no such module";
    return this.recorded(`ModuleLoad load ${module}`, (a) => a.case === which)!;
  }

  private async runCommand(command: string): Promise<Record<string, string | string[]>> {
    const unknown = this.recorded("no such thing", () => true)!;
    const noSuchCommand = {
      ...unknown,
      Output: [
        `No such command '${command}' (type 'core show help ${command}' for other possible commands)`,
      ],
    };
    if (command === "core show uptime") {
      return this.recorded(command, () => true)!;
    }
    if (command === "moh show classes") return this.musicClassListing() ?? noSuchCommand;
    const contextProbe = new RegExp(`^dialplan show ${CONTEXT_PROBE_EXTENSION}@(\\S+)$`).exec(
      command,
    );
    if (contextProbe) {
      const there = this.config ? this.config.has("dialplan show", contextProbe[1]!) : true;
      return (
        this.recorded(command, (a) => a.case === `${there ? "found" : "missing"} context probe`) ??
        noSuchCommand
      );
    }
    const probe = /^(dialplan show|pjsip show endpoint|queue show) (\S+)$/.exec(command);
    if (probe) {
      const kind =
        probe[1] === "dialplan show" ? (probe[2]!.includes("@") ? "extension" : "context") : "";
      const there =
        probe[1] === "pjsip show endpoint" && this.realtimeEndpoint
          ? await this.realtimeLookup(probe[2]!)
          : this.config
            ? this.config.has(probe[1]!, probe[2]!)
            : true;
      const answer = this.recorded(
        command,
        (a) => a.case === `${there ? "found" : "missing"}${kind ? ` ${kind}` : ""}`.trim(),
      );
      return answer ?? noSuchCommand;
    }
    if (!RELOAD.test(command)) return this.recorded(command, () => true) ?? noSuchCommand;
    const module = moduleOfReload(command);
    if (
      command.startsWith("module refresh ") &&
      (this.unloadedModules.has(module!) || (module === "app_queue.so" && this.queueInUse))
    ) {
      return this.recorded(command, (a) => a.case === "refused") ?? noSuchCommand;
    }
    if (module && this.unloadedModules.has(module)) return noSuchCommand;
    const busy = answersFor(command)?.answers.find((a) => a.case === "busy");
    if (this.refuseNextReloads > 0 && busy) {
      this.refuseNextReloads--;
      return { Response: busy.response, Message: busy.message, Output: busy.output };
    }
    const answer = this.recorded(command, (a) => a.case === "ok");
    if (!answer) return noSuchCommand;
    if (this.running > 0) this.overlaps++;
    this.running++;
    const start = performance.now();
    if (this.reloadDelayMs > 0) await new Promise((r) => setTimeout(r, this.reloadDelayMs));
    this.running--;
    this.reloads.push({ command, start, end: performance.now() });
    if (module) this.config?.loadModule(module);
    return answer;
  }
}

/** The module file a reload command reloads (as the AMI target maps it). */
function moduleOfReload(command: string): string | null {
  if (command === "dialplan reload") return "pbx_config.so";
  if (command.startsWith("queue reload")) return "app_queue.so";
  if (command === "moh reload") return "res_musiconhold.so";
  return /^module (?:reload|refresh) (\S+)$/.exec(command)?.[1] ?? null;
}

function parse(block: string): Record<string, string> {
  const fields: Record<string, string> = {};
  for (const line of block.split("\r\n")) {
    const colon = line.indexOf(":");
    if (colon <= 0) continue;
    fields[line.slice(0, colon).trim()] = line.slice(colon + 1).trim();
  }
  return fields;
}

/** One AMI message: `Key: value` lines (arrays repeat the key), ActionID echoed, blank line. */
function format(headers: Record<string, string | string[]>, actionId?: string): string {
  const lines: string[] = [];
  for (const [key, value] of Object.entries(headers)) {
    if (key === "Response" && value === "") continue;
    if (Array.isArray(value)) for (const line of value) lines.push(`${key}: ${line}`);
    else lines.push(`${key}: ${value}`);
    if (key === "Response" && actionId !== undefined) lines.push(`ActionID: ${actionId}`);
  }
  return `${lines.join("\r\n")}\r\n\r\n`;
}

/** A recorded session value with its placeholders filled in (`{n}`: the clock, as the engine's). */
function fillSession(value: string, name: string): string {
  return value
    .split("{name}")
    .join(name)
    .replace(/\{n\}/g, () => (performance.timeOrigin / 1000 + performance.now() / 1000).toFixed(6));
}

/** An event's headers with the action's ActionID after its first header, where Asterisk puts it. */
function withActionId(
  fields: Record<string, string>,
  actionId: string | undefined,
): Record<string, string> {
  if (actionId === undefined) return fields;
  const [first, ...rest] = Object.entries(fields);
  return Object.fromEntries(first ? [first, ["ActionID", actionId], ...rest] : rest);
}

/**
 * The engine's recorded answer to `action` in case `which` (`{channel}` filled in with `channel`),
 * or the answer Asterisk gives an action it does not know, when nothing was recorded.
 */
function recordedReply(action: string, which: string, channel = ""): Record<string, string> {
  const recorded = recordedActionAnswer(action, which);
  return recorded
    ? { Response: recorded.response, Message: recorded.message.split("{channel}").join(channel) }
    : unknownAction(action);
}

/** Asterisk's answer to an action it does not have, as recorded. */
function unknownAction(action: string): Record<string, string> {
  const [answer] = recordedSession().answers.find((a) => a.case === "unknown action")!.messages;
  return Object.fromEntries(
    Object.entries(answer!).map(([key, value]) => [key, value.split("{name}").join(action)]),
  );
}
