// The one table of pbxctl exit codes (docs/cli.md repeats it for operators).

export const ExitCode = {
  /** Success; for `plan`, also "no change". */
  ok: 0,
  /** Invalid org files, unreadable paths, a failed compile or git error; nothing was written. */
  error: 1,
  /** A usage error (oclif's default for bad flags), or for `plan`, "there are changes". */
  usageOrChanges: 2,
} as const;

/**
 * `pbxctl status`: the worst state of any unit (1 and 2 keep their meaning: an error, a usage
 * error). No unit at all is 0.
 */
export const StatusExitCode = {
  /** Every unit OK: what is saved is live, as it was deployed. */
  ok: 0,
  /** Some unit PENDING (saved, not live yet; e.g. a deploy still to run), none worse. */
  pending: 3,
  /** Some unit DRIFTED (its files on disk changed since they were applied), none FAILED. */
  drifted: 4,
  /** Some unit's last deploy FAILED. */
  failed: 5,
} as const;

/** `pbxctl org move` (waiting): no `pbxctl serve` carries out moves; the move stays recorded. */
export const OrgMoveExitCode = {
  noDriver: 3,
} as const;
