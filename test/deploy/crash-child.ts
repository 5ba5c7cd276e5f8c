// Child process of the crash test: deploys large files into the engine dir given as argv[2]
// (content letter argv[3]) and is SIGKILLed by the parent in the middle of it.
import { FileDeployLog } from "../../src/deploy/deploy-log.js";
import { Deployer } from "../../src/deploy/deployer.js";
import { orgUnit } from "../../src/deploy/units.js";
import { createNoneTarget } from "../../src/engine/none-target.js";
import { bigOrgFiles } from "./crash-files.js";

async function main(dir: string, letter: string): Promise<void> {
  const deployer = new Deployer({
    engineDir: dir,
    target: createNoneTarget(),
    log: new FileDeployLog(dir),
  });
  process.stdout.write("start\n");
  await deployer.deploy(orgUnit("org_big_"), bigOrgFiles(letter));
  process.stdout.write("done\n");
}

// Only as the crash test's child: loaded by a runner globbing test/, its argv would name the
// runner's own arguments and it would deploy 500 MB into the working tree.
if (process.env.PBX_CRASH_CHILD === "1") {
  const [dir, letter] = process.argv.slice(2) as [string, string];
  await main(dir, letter);
}
