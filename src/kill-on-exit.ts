// A throwaway engine, database, SIP phone or edge that a test harness or bench started must never
// outlive the process that started it: each child registered here is killed by PID (SIGKILL) when
// this process exits, or is interrupted, even when a test threw past its `finally`.
import type { ChildProcess } from "node:child_process";

const alive = new Set<ChildProcess>();
let hooked = false;

function killAll(): void {
  for (const child of alive) {
    try {
      child.kill("SIGKILL");
    } catch {}
  }
}

/** Kills `child` if this process ends while it still runs; forgotten once it has exited. */
export function killOnExit(child: ChildProcess): void {
  alive.add(child);
  child.once("exit", () => alive.delete(child));
  if (hooked) return;
  hooked = true;
  process.on("exit", killAll);
  for (const signal of ["SIGINT", "SIGTERM"] as const) {
    process.once(signal, () => {
      killAll();
      process.exit(1);
    });
  }
}
