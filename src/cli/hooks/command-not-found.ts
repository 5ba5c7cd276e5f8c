// An unknown command: on a terminal, @oclif/plugin-not-found asks "Did you mean deploy?" and runs
// it on yes. Piped or in CI nobody can answer that prompt and the plugin says nothing useful, so
// the nearest command is named in the message itself.
import { type Hook, toConfiguredId } from "@oclif/core";
import askDidYouMean from "@oclif/plugin-not-found";
import { nearestName as nearestCommand } from "../lib/nearest.js";

const hook: Hook<"command_not_found"> = async function (options) {
  if (process.stdin.isTTY) return askDidYouMean.call(this, options);
  const visible = options.config.commands.filter((command) => !command.hidden);
  const ids = visible.flatMap((command) => [command.id, ...command.aliases]);
  // With a space as topic separator, `deplyo orgs` arrives as the id `deplyo:orgs`: the
  // arguments are part of it. Try the longest run of words first.
  const words = options.id.split(":");
  let typedId = options.id;
  let nearest: string | undefined;
  for (let count = words.length; count > 0 && !nearest; count--) {
    typedId = words.slice(0, count).join(":");
    nearest = nearestCommand(typedId, ids);
  }
  if (!nearest) typedId = words[0]!;
  const typed = toConfiguredId(typedId, options.config);
  const hint = nearest ? ` Did you mean "${toConfiguredId(nearest, options.config)}"?` : "";
  this.error(
    `${typed} is not a ${options.config.bin} command.${hint} ` +
      `Run "${options.config.bin} help" for the list.`,
    { exit: 127 },
  );
};

export default hook;

export { nearestCommand };
