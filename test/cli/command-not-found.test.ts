// The command_not_found hook off a terminal: names the nearest command in the error itself.
import { test } from "uvu";
import * as assert from "uvu/assert";
import hook, { nearestCommand } from "../../src/cli/hooks/command-not-found.js";

const IDS = ["deploy", "validate", "compile", "calls:list", "calls:tail", "tts:say"];

test("nearestCommand: a typo finds its command, a different word finds none", () => {
  assert.is(nearestCommand("deplyo", IDS), "deploy");
  assert.is(nearestCommand("valdate", IDS), "validate");
  assert.is(nearestCommand("calls:lsit", IDS), "calls:list");
  assert.is(nearestCommand("frobnicate", IDS), undefined);
});

async function run(id: string): Promise<{ message: string; exit: number | undefined }> {
  const config = {
    bin: "pbxctl",
    topicSeparator: " ",
    commands: IDS.map((commandId) => ({ id: commandId, aliases: [], hidden: false })),
  };
  let thrown: { message: string; exit: number | undefined } | undefined;
  const context = {
    error(message: string, options: { exit: number }) {
      thrown = { message, exit: options.exit };
      throw new Error(message);
    },
  };
  const previous = process.stdin.isTTY;
  process.stdin.isTTY = false;
  try {
    // biome-ignore lint/suspicious/noExplicitAny: a minimal oclif hook context and options
    await (hook as any).call(context, { id, config, argv: [] });
  } catch {
    // the error() above
  } finally {
    process.stdin.isTTY = previous;
  }
  assert.ok(thrown, "the hook ends in an error");
  return thrown;
}

test("off a terminal: the nearest command is in the message, exit 127", async () => {
  const typo = await run("deplyo");
  assert.is(typo.exit, 127);
  assert.is(
    typo.message,
    'deplyo is not a pbxctl command. Did you mean "deploy"? Run "pbxctl help" for the list.',
  );
  const withArgs = await run("calls:lsit:extra");
  assert.match(withArgs.message, 'Did you mean "calls list"?');
  const unknown = await run("frobnicate");
  assert.is(unknown.message, 'frobnicate is not a pbxctl command. Run "pbxctl help" for the list.');
});

test.run();
