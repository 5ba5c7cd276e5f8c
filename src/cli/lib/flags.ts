// Flags several commands share, declared once.
import { Args, Flags } from "@oclif/core";

/** Where the top-level files include org files from (compile and plan). */
export const includeRootFlag = {
  "include-root": Flags.string({
    summary: "Directory the top-level files #include org files from (default: relative paths).",
    description:
      "Asterisk resolves relative #include paths against its own config directory, so a tree " +
      "deployed anywhere else must be included by absolute path.",
  }),
};

/** The variadic org file/directory argument (commands using it set `strict = false`). */
export const orgPathsArgs = {
  paths: Args.string({
    required: true,
    description: "Org files (*.yaml) or directories of them; several may be given.",
  }),
};

/** Every command that loads org files: the cache beside them (docs/gitops.md, "The cache"). */
export const cacheFlag = {
  cache: Flags.boolean({
    default: true,
    allowNo: true,
    summary: "Reuse and update the analysis cache beside the org files (.pbxctl/cache/).",
  }),
};
