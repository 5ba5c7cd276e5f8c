// Shared helpers for deploy tests: a fake clock, temp engine dirs, a fake AMI engine.
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import type { TimerHandle, Timers } from "../../src/clock.js";
import { FileDeployLog } from "../../src/deploy/deploy-log.js";
import { Deployer } from "../../src/deploy/deployer.js";
import { type AmiTarget, createAmiTarget } from "../../src/engine/ami-target.js";
import { FakeAmiServer } from "../../src/engine/testing/fake-ami.js";

/** A clock that only moves when told to; timers run in due order during advance(). */
export class FakeClock implements Timers {
  private time = 0;
  private timers: { due: number; seq: number; callback: () => void; cancelled: boolean }[] = [];
  private seq = 0;

  now(): number {
    return this.time;
  }

  setTimer(ms: number, callback: () => void): TimerHandle {
    const timer = { due: this.time + ms, seq: this.seq++, callback, cancelled: false };
    this.timers.push(timer);
    return {
      cancel: () => {
        timer.cancelled = true;
      },
    };
  }

  /** Moves time forward by `ms`, running every timer that falls due on the way. */
  advance(ms: number): void {
    const target = this.time + ms;
    for (;;) {
      const next = this.timers
        .filter((t) => !t.cancelled && t.due <= target)
        .sort((a, b) => a.due - b.due || a.seq - b.seq)[0];
      if (!next) break;
      next.cancelled = true;
      this.time = next.due;
      next.callback();
    }
    this.timers = this.timers.filter((t) => !t.cancelled);
    this.time = target;
  }

  get pendingTimers(): number {
    return this.timers.filter((t) => !t.cancelled).length;
  }

  /** When each pending timer falls due, earliest first (a test waits for one to be armed). */
  get dueTimes(): number[] {
    return this.timers
      .filter((t) => !t.cancelled)
      .map((t) => t.due)
      .sort((a, b) => a - b);
  }
}

/**
 * Lets I/O and promises run (no time passes on `clock`) until `armed()` holds: the code under test
 * has reached the timer it waits on. Bounded in event-loop turns, so a wait that never comes fails.
 */
export async function untilArmed(armed: () => boolean, turns = 100_000): Promise<void> {
  for (let turn = 0; turn < turns; turn++) {
    if (armed()) return;
    await new Promise((resolve) => setImmediate(resolve));
  }
  throw new Error("the awaited timer was never armed");
}

export async function tempDir(): Promise<{ dir: string; cleanup: () => Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), "pbxctl-deploy-"));
  return { dir, cleanup: () => rm(dir, { recursive: true, force: true }) };
}

export interface Rig {
  dir: string;
  ami: FakeAmiServer;
  target: AmiTarget;
  deployer: Deployer;
  log: FileDeployLog;
  close: () => Promise<void>;
}

/** A deployer writing into a temp dir and reloading a fake AMI server. */
export async function rig(options: { reloadDelayMs?: number } = {}): Promise<Rig> {
  const { dir, cleanup } = await tempDir();
  // The fake "loads" what the deployer writes, so its after-reload checks see real state.
  const ami = new FakeAmiServer({ ...options, engineDir: dir, implicitIncludes: true });
  const port = await ami.listen();
  const target = createAmiTarget({
    host: "127.0.0.1",
    port,
    username: "pbxctl",
    secret: "secret",
    reconnectInitialMs: 10,
    actionTimeoutMs: 3000,
  });
  const log = new FileDeployLog(dir);
  const deployer = new Deployer({
    engineDir: dir,
    target,
    log,
    reloadQueueOptions: { retryInitialMs: 2, retryMaxMs: 10 },
  });
  return {
    dir,
    ami,
    target,
    deployer,
    log,
    close: async () => {
      await target.close();
      await ami.close();
      await cleanup();
    },
  };
}

/** Literal org files: the deployer does not care what they say. */
export function orgFiles(
  prefix: string,
  parts: { dialplan?: string; pjsip?: string; queues?: string } = {},
) {
  return [
    {
      path: `orgs/${prefix}/extensions.conf`,
      content: parts.dialplan ?? `[${prefix}internal]\nexten => 100,1,Answer()\n`,
    },
    {
      path: `orgs/${prefix}/pjsip.conf`,
      content: parts.pjsip ?? `[${prefix}100]\ntype=endpoint\n`,
    },
    {
      path: `orgs/${prefix}/queues.conf`,
      content: parts.queues ?? `[${prefix}q_5000]\nstrategy=ringall\n`,
    },
  ];
}

/** Every file under `dir` (the deployer's own bookkeeping left out) with its text; none when absent. */
export function tree(dir: string): Map<string, string> {
  const files = new Map<string, string>();
  const walk = (at: string) => {
    for (const entry of readdirSync(at)) {
      const full = join(at, entry);
      if (entry === ".pbxctl") continue;
      if (statSync(full).isDirectory()) walk(full);
      else files.set(relative(dir, full), readFileSync(full, "utf8"));
    }
  };
  if (existsSync(dir)) walk(dir);
  return files;
}
