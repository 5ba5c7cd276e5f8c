// The one table of pbxctl exit codes (docs/cli.md repeats it for operators).

export const ExitCode = {
  /** Success; for `plan`, also "no change". */
  ok: 0,
  /** Invalid org files, unreadable paths, a failed compile or git error; nothing was written. */
  error: 1,
  /** A usage error (oclif's default for bad flags), or for `plan`, "there are changes". */
  usageOrChanges: 2,
} as const;
