// A simulated call as a person reads it: one numbered line per step with its context and
// extension, subroutine steps indented under the step that calls them, then the outcome.
import type { Simulation } from "../../compiler/simulate.js";

/** The simulation as text lines (no trailing newline). */
export function formatSimulation(simulation: Simulation): string {
  const lines = [`Call to ${simulation.did} (${simulation.org}):`];
  let number = 0;
  for (const step of simulation.steps) {
    const where = `[${step.context},${step.exten}]`;
    if (step.subroutine) lines.push(`      ${step.text}  ${where}`);
    else lines.push(`  ${String(++number).padStart(2)}. ${step.text}  ${where}`);
  }
  lines.push(`Outcome: ${simulation.outcome}`);
  return lines.join("\n");
}
