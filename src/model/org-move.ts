// An org move's phases (issue 25, docs/nodes.md "Moving an org"), in the order a move goes
// through them: the one list the stored move, its view schema and the driver share.

/** A move's phases, in order. */
export const MOVE_PHASES = [
  "deploying",
  "switching",
  "re-registering",
  "draining",
  "removing",
  "done",
] as const;
export type MovePhase = (typeof MOVE_PHASES)[number];
