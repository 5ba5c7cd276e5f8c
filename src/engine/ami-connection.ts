// One long-lived AMI connection (asterisk-manager underneath) that reconnects with exponential
// backoff. The library's own keepConnected waits 10-60 s between tries and re-sends actions held
// while disconnected; neither suits a deployer (a stale reload sent minutes later could overlap a
// new one), so this wrapper sends an action only while logged in, fails it fast otherwise, and
// fails every in-flight action when the connection drops.
import type Manager from "asterisk-manager";
import type { AmiManager, AmiMessage } from "asterisk-manager";
import { packageOnFirstUse } from "../lazy-package.js";
import { type AmiInstruments, noInstruments } from "../metrics/instruments.js";
import { EngineCommandError, EngineUnavailableError } from "./target.js";

export type { AmiMessage };

/** Loaded by the first connection: a server without an AMI engine never needs it. */
const amiManager = packageOnFirstUse<typeof Manager>("asterisk-manager");

export interface AmiConnectionOptions {
  host: string;
  port: number;
  username: string;
  secret: string;
  /** Ask for events on this connection (`Events: on` at login). Off for the deployer. */
  events?: boolean;
  /** First reconnect delay; doubles on each failure up to `reconnectMaxMs`. */
  reconnectInitialMs?: number;
  reconnectMaxMs?: number;
  /** How long an action may wait for the login and then for its response. */
  actionTimeoutMs?: number;
  /** How long `reach()` waits for a first login before it gives up. */
  connectTimeoutMs?: number;
  /** Where connection changes are reported (defaults to nowhere; the server passes pino). */
  log?: (message: string, fields?: Record<string, unknown>) => void;
  /** Connected state, reconnects and refused actions (src/metrics); see also `instrument()`. */
  instruments?: AmiInstruments;
}

type State = "idle" | "connecting" | "ready" | "closed";

/**
 * The longest line (CRLF not counted) Asterisk's AMI reads: main/manager.c reads a line into
 * `inbuf[1025]`, keeps one byte for the NUL and needs the CRLF inside the buffer, so 1,022 bytes.
 * A longer line is refused with "Failed to parse message: line too long" (checked on 22.10.1).
 */
export const AMI_MAX_LINE_BYTES = 1022;

/**
 * Throws EngineCommandError when a header line of the action would be longer than the engine
 * reads, so a caller learns it here instead of from a refusal (or a line cut in two).
 */
export function assertActionFits(fields: Record<string, string>): void {
  for (const [key, value] of Object.entries(fields)) {
    const bytes = Buffer.byteLength(`${key}: ${value}`);
    if (bytes > AMI_MAX_LINE_BYTES) {
      throw new EngineCommandError(
        `${fields.Action ?? "AMI action"}: the ${key} line is ${bytes} bytes, over the ${AMI_MAX_LINE_BYTES} bytes AMI accepts`,
      );
    }
  }
}

interface Waiter {
  resolve: () => void;
  reject: (error: Error) => void;
  timer: NodeJS.Timeout;
}

/** A reconnecting AMI session; `action()` resolves with the response message. */
export class AmiConnection {
  private readonly manager: AmiManager;
  private readonly options: Required<Omit<AmiConnectionOptions, "log" | "instruments">>;
  private instruments: AmiInstruments;
  private readonly log: (message: string, fields?: Record<string, unknown>) => void;
  private state: State = "idle";
  private backoffMs: number;
  private reconnectTimer: NodeJS.Timeout | null = null;
  private readonly readyWaiters = new Set<Waiter>();
  private readonly inFlight = new Map<string, (error: Error) => void>();
  private readonly listCollectors = new Map<string, (event: AmiMessage) => void>();
  private readonly eventListeners = new Set<(event: AmiMessage) => void>();
  private readonly loginListeners = new Set<() => void>();
  private readonly lostListeners = new Set<() => void>();
  /** Told the outcome of each connection attempt (null: logged in; else why it failed). */
  private readonly attemptListeners = new Set<(failure: string | null) => void>();
  /** The socket error of the attempt under way (ECONNREFUSED, ETIMEDOUT, ...), if any. */
  private socketError: string | null = null;
  private nextActionId = 1;
  private lastError: string | null = null;
  /** How many times a login succeeded (1 + the number of reconnects). */
  logins = 0;

  constructor(options: AmiConnectionOptions) {
    this.options = {
      events: false,
      reconnectInitialMs: 250,
      reconnectMaxMs: 30_000,
      actionTimeoutMs: 10_000,
      connectTimeoutMs: 5_000,
      ...options,
    };
    this.log = options.log ?? (() => {});
    this.instruments = options.instruments ?? noInstruments.ami("deploy");
    // Down until the first login: an engine unreachable from the start is measured too.
    this.instruments.connected(false);
    this.backoffMs = this.options.reconnectInitialMs;
    // No port: the library must not connect on its own; start() does.
    this.manager = new (amiManager())(
      undefined,
      options.host,
      options.username,
      options.secret,
      this.options.events,
    );
    this.manager.on("close", () => this.onClose());
    this.manager.on("error", (error: NodeJS.ErrnoException) => {
      this.socketError = socketErrorText(error);
    });
    this.manager.on("managerevent", (event: AmiMessage) => {
      const collector =
        typeof event.actionid === "string" ? this.listCollectors.get(event.actionid) : undefined;
      if (collector) {
        collector(event);
        return;
      }
      for (const listener of this.eventListeners) listener(event);
    });
  }

  /** Opens the connection (idempotent); actions wait for the login. */
  start(): void {
    if (this.state !== "idle") return;
    this.connect();
  }

  /** Reports to `instruments` from now on (a target built before the server's metrics). */
  instrument(instruments: AmiInstruments): void {
    this.instruments = instruments;
    instruments.connected(this.state === "ready");
  }

  get isReady(): boolean {
    return this.state === "ready";
  }

  /** Why the last connection attempt failed, if it did. */
  get error(): string | null {
    return this.lastError;
  }

  /** Calls `listener` for every AMI event (only sent when `events` is on). */
  onEvent(listener: (event: AmiMessage) => void): () => void {
    this.eventListeners.add(listener);
    return () => this.eventListeners.delete(listener);
  }

  /**
   * Calls `listener` after every successful login (the first and each reconnect): state kept
   * from events may have missed changes while the connection was down.
   */
  onLogin(listener: () => void): () => void {
    this.loginListeners.add(listener);
    return () => this.loginListeners.delete(listener);
  }

  /** Calls `listener` when an established session drops (before the reconnect). */
  onLost(listener: () => void): () => void {
    this.lostListeners.add(listener);
    return () => this.lostListeners.delete(listener);
  }

  /**
   * Sends a list action (`CoreShowChannels`, ...) and resolves with the events of its list,
   * collected by ActionID until `completeEvent`. Rejects like `action()`, and with
   * EngineCommandError when Asterisk refuses the action.
   */
  listAction(
    fields: Record<string, string>,
    completeEvent: string,
    answerTimeoutMs = this.options.actionTimeoutMs,
  ): Promise<AmiMessage[]> {
    assertActionFits(fields);
    return this.counted(fields, this.sendListAction(fields, completeEvent, answerTimeoutMs));
  }

  private async sendListAction(
    fields: Record<string, string>,
    completeEvent: string,
    answerTimeoutMs: number,
  ): Promise<AmiMessage[]> {
    await this.ready();
    const id = `pbxctl-${process.pid}-${this.nextActionId++}`;
    const items: AmiMessage[] = [];
    const complete = completeEvent.toLowerCase();
    return new Promise<AmiMessage[]>((resolve, reject) => {
      const settle = (error: Error | null) => {
        if (!this.inFlight.has(id)) return;
        this.inFlight.delete(id);
        this.listCollectors.delete(id);
        clearTimeout(timer);
        if (error) reject(error);
        else resolve(items);
      };
      const timer = setTimeout(
        () => settle(new EngineUnavailableError(`AMI ${fields.Action} timed out`)),
        answerTimeoutMs,
      );
      this.inFlight.set(id, (error) => settle(error));
      this.listCollectors.set(id, (event) => {
        if (String(event.event).toLowerCase() === complete) settle(null);
        else items.push(event);
      });
      this.manager.action({ ...fields, actionid: id }, (err) => {
        if (err) {
          settle(
            new EngineCommandError(`${fields.Action} failed: ${String(err.message ?? "error")}`),
          );
        }
      });
    });
  }

  /**
   * Fails fast when the engine cannot be reached: resolves once logged in, rejects with
   * AmiUnreachableError on the first connection attempt that fails (refused, closed before the
   * greeting, login refused) or when none logs in within `timeoutMs`. For commands that act once
   * and exit, where waiting through reconnects only delays the same answer.
   */
  reach(timeoutMs = this.options.connectTimeoutMs): Promise<void> {
    if (this.state === "ready") return Promise.resolve();
    const where = { host: this.options.host, port: this.options.port };
    if (this.state === "closed") {
      return Promise.reject(new AmiUnreachableError(where, "connection closed by pbxctl"));
    }
    return new Promise((resolve, reject) => {
      const settle = (failure: string | null) => {
        clearTimeout(timer);
        this.attemptListeners.delete(settle);
        if (failure === null) resolve();
        else reject(new AmiUnreachableError(where, failure));
      };
      const timer = setTimeout(
        () => settle(`no AMI login within ${timeoutMs} ms (${this.lastError ?? "no answer"})`),
        timeoutMs,
      );
      this.attemptListeners.add(settle);
      this.start();
    });
  }

  /** Resolves once logged in; rejects with EngineUnavailableError after `timeoutMs`. */
  ready(timeoutMs = this.options.actionTimeoutMs): Promise<void> {
    if (this.state === "ready") return Promise.resolve();
    if (this.state === "closed") return Promise.reject(new EngineUnavailableError("AMI closed"));
    this.start();
    return new Promise((resolve, reject) => {
      const waiter: Waiter = {
        resolve,
        reject,
        timer: setTimeout(() => {
          this.readyWaiters.delete(waiter);
          const why = this.lastError ? `: ${this.lastError}` : "";
          reject(new EngineUnavailableError(`AMI not connected${why}`));
        }, timeoutMs),
      };
      this.readyWaiters.add(waiter);
    });
  }

  /**
   * Sends one action once logged in and resolves with its response (also `Response: Error`:
   * callers judge). Rejects with EngineUnavailableError when not connected in time, when the
   * connection drops before the answer, or when no answer comes within `answerTimeoutMs`
   * (default: the action timeout).
   */
  action(
    fields: Record<string, string>,
    answerTimeoutMs = this.options.actionTimeoutMs,
  ): Promise<AmiMessage> {
    assertActionFits(fields);
    return this.counted(fields, this.sendAction(fields, answerTimeoutMs));
  }

  /** Counts an action refused (`Response: Error`) or not answered, by its AMI action name. */
  private async counted<T>(fields: Record<string, string>, sent: Promise<T>): Promise<T> {
    try {
      const answer = await sent;
      const response = (answer as { response?: unknown }).response;
      if (typeof response === "string" && response.toLowerCase() === "error") {
        this.instruments.commandError(fields.Action ?? "unknown");
      }
      return answer;
    } catch (error) {
      this.instruments.commandError(fields.Action ?? "unknown");
      throw error;
    }
  }

  private async sendAction(
    fields: Record<string, string>,
    answerTimeoutMs: number,
  ): Promise<AmiMessage> {
    await this.ready();
    const id = `pbxctl-${process.pid}-${this.nextActionId++}`;
    return new Promise<AmiMessage>((resolve, reject) => {
      const settle = (error: Error | null, message?: AmiMessage) => {
        if (!this.inFlight.has(id)) return;
        this.inFlight.delete(id);
        clearTimeout(timer);
        if (error) reject(error);
        else resolve(message!);
      };
      const timer = setTimeout(
        () => settle(new EngineUnavailableError(`AMI ${fields.Action} timed out`)),
        answerTimeoutMs,
      );
      this.inFlight.set(id, (error) => settle(error));
      this.manager.action({ ...fields, actionid: id }, (err, response) =>
        settle(null, response ?? err),
      );
    });
  }

  /** Closes the connection for good; pending actions fail. */
  async close(): Promise<void> {
    if (this.state === "closed") return;
    if (this.state === "ready") this.instruments.connected(false);
    this.state = "closed";
    if (this.reconnectTimer) clearTimeout(this.reconnectTimer);
    this.failAll(new EngineUnavailableError("AMI closed"));
    await new Promise<void>((resolve) => this.manager.disconnect(resolve));
  }

  private connect(): void {
    this.state = "connecting";
    this.socketError = null;
    this.manager.connect(this.options.port, this.options.host, () => {
      this.manager.login((err) => {
        if (this.state === "closed") return;
        if (err) {
          this.lastError = `login refused: ${String(err.message ?? "authentication failed")}`;
          this.log("AMI login refused", { host: this.options.host, port: this.options.port });
          this.attemptEnded(this.lastError);
          // Drop the socket; onClose retries with backoff (the secret may be fixed meanwhile).
          this.manager.disconnect();
          this.onClose();
          return;
        }
        this.state = "ready";
        this.lastError = null;
        if (this.logins > 0) this.instruments.reconnected();
        this.logins++;
        this.instruments.connected(true);
        this.backoffMs = this.options.reconnectInitialMs;
        this.log("AMI connected", { host: this.options.host, port: this.options.port });
        for (const waiter of this.readyWaiters) {
          clearTimeout(waiter.timer);
          waiter.resolve();
        }
        this.readyWaiters.clear();
        for (const listener of this.loginListeners) listener();
        this.attemptEnded(null);
      });
    });
  }

  private onClose(): void {
    if (this.state === "closed" || this.reconnectTimer) return;
    if (this.state === "ready") {
      this.log("AMI connection lost", { host: this.options.host });
      this.instruments.connected(false);
      for (const listener of this.lostListeners) listener();
    }
    this.lastError = this.socketError ?? this.lastError ?? "connection closed";
    if (this.state === "connecting") this.attemptEnded(this.lastError);
    this.state = "connecting";
    this.failInFlight(new EngineUnavailableError("AMI connection closed before the answer"));
    const delay = this.backoffMs;
    this.backoffMs = Math.min(this.backoffMs * 2, this.options.reconnectMaxMs);
    this.reconnectTimer = setTimeout(() => {
      this.reconnectTimer = null;
      if (this.state !== "closed") this.connect();
    }, delay);
    this.reconnectTimer.unref();
  }

  private attemptEnded(failure: string | null): void {
    for (const listener of [...this.attemptListeners]) listener(failure);
  }

  private failInFlight(error: Error): void {
    for (const fail of [...this.inFlight.values()]) fail(error);
  }

  private failAll(error: Error): void {
    this.failInFlight(error);
    for (const waiter of this.readyWaiters) {
      clearTimeout(waiter.timer);
      waiter.reject(error);
    }
    this.readyWaiters.clear();
  }
}

/** The engine's AMI could not be reached (or refused the login); the message says what to check. */
export class AmiUnreachableError extends EngineUnavailableError {
  constructor(
    readonly where: { host: string; port: number },
    readonly reason: string,
  ) {
    super(amiUnreachableMessage(where, reason));
  }
}

/** One message naming host:port, what happened and the likely causes, in order of likelihood. */
export function amiUnreachableMessage(
  where: { host: string; port: number },
  reason: string,
): string {
  const address = `${where.host}:${where.port}`;
  if (reason.startsWith("login refused")) {
    return (
      `AMI at ${address} refused the login (${reason}): PBX_AMI_USERNAME and PBX_AMI_SECRET must ` +
      "be a user and its secret in Asterisk's manager.conf (`pbxctl engine init` prints them), " +
      "and that user's permit lines must allow this host"
    );
  }
  return (
    `cannot reach Asterisk's AMI at ${address}: ${reason}. Is Asterisk running ` +
    '(`asterisk -rx "core show uptime"`)? Is PBX_AMI_PORT the port in manager.conf? Does ' +
    "manager.conf's bindaddr, or the AMI user's deny/permit ACL, allow this host?"
  );
}

function socketErrorText(error: NodeJS.ErrnoException): string {
  switch (error.code) {
    case "ECONNREFUSED":
      return "connection refused (nothing listens there)";
    case "ETIMEDOUT":
      return "connection timed out";
    case "EHOSTUNREACH":
    case "ENETUNREACH":
      return "host unreachable";
    case "ENOTFOUND":
    case "EAI_AGAIN":
      return "host name not found";
    default:
      return error.code ? `${error.code}: ${error.message}` : error.message;
  }
}

/** The CLI output lines of a `Command` response (Asterisk 22 `Output:` lines, or old `Follows`). */
export function commandOutput(message: AmiMessage): string[] {
  const output = message.output;
  if (Array.isArray(output)) return output;
  if (typeof output === "string") return [output];
  const content = message.content;
  if (typeof content === "string") {
    return content
      .split("\n")
      .filter(
        (line) => !/^(actionid|privilege|response):/i.test(line) && line !== "--END COMMAND--",
      );
  }
  return [];
}

/** Throws EngineCommandError when the message is `Response: Error`. */
export function assertSuccess(message: AmiMessage, what: string): void {
  const response = String(message.response ?? "").toLowerCase();
  if (response === "error") {
    const detail = [String(message.message ?? ""), ...commandOutput(message)]
      .filter(Boolean)
      .join(" ");
    throw new EngineCommandError(`${what} failed: ${detail || "error"}`);
  }
}
