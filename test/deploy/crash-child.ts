// Child process of the crash test: deploys large files into the engine dir given as argv[2]
// (content letter argv[3]) and is SIGKILLed by the parent in the middle of it.
import { FileDeployLog } from "../../src/deploy/deploy-log.js";
import { Deployer } from "../../src/deploy/deployer.js";
import { orgUnit } from "../../src/deploy/units.js";
import { createNoneTarget } from "../../src/engine/none-target.js";
import { bigOrgFiles } from "./crash-files.js";

const [dir, letter] = process.argv.slice(2) as [string, string];
const deployer = new Deployer({
  engineDir: dir,
  target: createNoneTarget(),
  log: new FileDeployLog(dir),
});
process.stdout.write("start\n");
await deployer.deploy(orgUnit("org_big_"), bigOrgFiles(letter));
process.stdout.write("done\n");
