// One queue for every engine reload of the process: never two at once, across all units (some
// Asterisk modules refuse a reload while another runs, and PJSIP reloads are slow). A reload the
// engine refuses as "already in progress" is retried with backoff. An identical command still
// waiting in the queue is shared: two orgs whose dialplans changed get one `dialplan reload`
// after both files are written. Queue reloads waiting together become one: two different named
// queue reloads could not both work (the first loads queues.conf, the second finds it
// "unchanged", see `queueReload`), so they wait as one full `queue reload all`.

import { systemTimers, type Timers } from "../clock.js";
import { EngineBusyError, type EngineTarget, type ReloadOutcome } from "../engine/target.js";
import { noInstruments, type ReloadInstruments } from "../metrics/instruments.js";
import { fullReloadOf, type ReloadCommand } from "./reloads.js";

export interface ReloadQueueOptions {
  /** How many times a refused reload is sent in all (default 8). */
  maxAttempts?: number;
  /** First wait after a refusal; doubles each time up to `retryMaxMs`. */
  retryInitialMs?: number;
  retryMaxMs?: number;
  /** The waits between retries (src/clock.ts). */
  timers?: Timers;
  /** Commands sent and reload durations, by module (src/metrics). */
  instruments?: ReloadInstruments;
}

interface Job {
  command: ReloadCommand;
  units: string[];
  done: Promise<ReloadOutcome>;
  start: () => void;
}

/** Serializes reloads through one engine target. */
export class ReloadQueue {
  private readonly pending: Job[] = [];
  private running = false;
  private readonly maxAttempts: number;
  private readonly retryInitialMs: number;
  private readonly retryMaxMs: number;
  private readonly timers: Timers;
  private readonly instruments: ReloadInstruments;
  /** Number of reload commands sent to the engine (retries included). */
  sent = 0;

  constructor(
    private readonly target: EngineTarget,
    options: ReloadQueueOptions = {},
  ) {
    this.maxAttempts = options.maxAttempts ?? 8;
    this.retryInitialMs = options.retryInitialMs ?? 200;
    this.retryMaxMs = options.retryMaxMs ?? 5000;
    this.timers = options.timers ?? systemTimers;
    this.instruments = options.instruments ?? noInstruments.reloads;
  }

  /**
   * Queues `commands` (in order) on behalf of `units` and resolves with one outcome per command
   * once they ran. Never rejects: failures are outcomes with status `failed`.
   */
  run(
    commands: readonly ReloadCommand[],
    units: string | readonly string[],
  ): Promise<ReloadOutcome[]> {
    const unitList = typeof units === "string" ? [units] : units;
    const jobs: Job[] = [];
    // Only join a waiting job behind the ones this batch already uses, so the batch keeps its
    // order (PJSIP before dialplan).
    let from = 0;
    for (const command of commands) {
      let index = -1;
      for (let i = from; i < this.pending.length; i++) {
        const waiting = this.pending[i]!.command;
        if (
          waiting.command === command.command ||
          (waiting.module === "queues" && command.module === "queues")
        ) {
          index = i;
          break;
        }
      }
      if (index >= 0) {
        const job = this.pending[index]!;
        if (job.command.command !== command.command) job.command = fullReloadOf("queues");
        for (const unit of unitList) if (!job.units.includes(unit)) job.units.push(unit);
        jobs.push(job);
        from = index + 1;
      } else {
        const job = this.makeJob(command, unitList);
        this.pending.push(job);
        jobs.push(job);
        from = this.pending.length;
      }
    }
    this.pump();
    return Promise.all(jobs.map((job) => job.done));
  }

  /** Resolves when nothing is queued or running. */
  async idle(): Promise<void> {
    while (this.running || this.pending.length > 0) {
      await this.pending[this.pending.length - 1]?.done;
      await new Promise((r) => setImmediate(r));
    }
  }

  private makeJob(command: ReloadCommand, units: readonly string[]): Job {
    let start!: () => void;
    const job: Job = { command, units: [...units], done: null as never, start: null as never };
    job.done = new Promise<void>((resolve) => {
      start = resolve;
    }).then(() => this.execute(job));
    job.start = start;
    return job;
  }

  private pump(): void {
    if (this.running) return;
    const job = this.pending.shift();
    if (!job) return;
    this.running = true;
    job.start();
    void job.done.finally(() => {
      this.running = false;
      this.pump();
    });
  }

  private async execute(job: Job): Promise<ReloadOutcome> {
    const outcome = await this.attempt(job);
    this.instruments.reloaded(job.command.module, outcome.status, outcome.durationMs / 1000);
    return outcome;
  }

  private async attempt(job: Job): Promise<ReloadOutcome> {
    const started = performance.now();
    let delay = this.retryInitialMs;
    let lastError = "";
    let attempts = 0;
    for (let attempt = 1; attempt <= this.maxAttempts; attempt++) {
      attempts = attempt;
      this.sent++;
      try {
        const outcome = await this.target.reload({ command: job.command, units: job.units });
        // A files-only target runs nothing: nothing was sent.
        if (outcome.status !== "skipped") this.instruments.commandSent(job.command.module);
        return { ...outcome, attempts: attempt, durationMs: performance.now() - started };
      } catch (error) {
        this.instruments.commandSent(job.command.module);
        lastError = (error as Error).message;
        if (!(error instanceof EngineBusyError) || attempt === this.maxAttempts) break;
        await new Promise<void>((resolve) => this.timers.setTimer(delay, resolve));
        delay = Math.min(delay * 2, this.retryMaxMs);
      }
    }
    return {
      command: job.command.command,
      status: "failed",
      error: lastError,
      attempts,
      durationMs: performance.now() - started,
    };
  }
}
