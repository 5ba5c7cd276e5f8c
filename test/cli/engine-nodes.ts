// Adding engine nodes to a test's store the way an operator does (`pbxctl nodes add`).
import * as assert from "uvu/assert";
import NodesAdd from "../../src/cli/commands/nodes/add.js";
import { runCommand } from "./run-command.js";

/** Adds engine node `name` at `sipAddress` (AMI credentials a test never uses) to `dataDir`. */
export async function addEngineNode(
  dataDir: string,
  name: string,
  sipAddress: string,
  capacity = 10,
): Promise<void> {
  const added = await runCommand(NodesAdd, [
    name,
    ...["--ami-user", "pbxctl", "--ami-secret", "Secret-123", "--data-dir", dataDir],
    ...["--sip-address", sipAddress, "--capacity", String(capacity)],
  ]);
  assert.is(added.code, 0, added.stderr + String(added.error));
}
