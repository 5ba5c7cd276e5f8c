// An unknown command: on a terminal, @oclif/plugin-not-found asks "Did you mean deploy?" and runs
// it on yes. Piped or in CI nobody can answer that prompt and the plugin says nothing useful, so
// the nearest command is named in the message itself.
import { type Hook, toConfiguredId } from "@oclif/core";
import askDidYouMean from "@oclif/plugin-not-found";

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

/** The id closest to `typed` by edit distance, if it is close enough to be a typo. */
export function nearestCommand(typed: string, ids: readonly string[]): string | undefined {
  let best: { id: string; distance: number } | undefined;
  for (const id of ids) {
    const distance = editDistance(typed, id);
    if (!best || distance < best.distance) best = { id, distance };
  }
  // More than half the word changed is not a typo of it.
  return best && best.distance <= Math.max(2, Math.floor(typed.length / 2)) ? best.id : undefined;
}

function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      const substitution = previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1);
      current[j] = Math.min(previous[j]! + 1, current[j - 1]! + 1, substitution);
    }
    previous = current;
  }
  return previous[b.length]!;
}
