// The engine target of realtime PJSIP mode as the file deployer sees it: a pjsip.conf change never
// reloads res_pjsip (only the identify module), and endpoint probes of the files are not asked
// (in realtime mode the files hold no endpoint; a row serves it).
import { test } from "uvu";
import * as assert from "uvu/assert";
import { IDENTIFY_RELOAD, realtimePjsipTarget } from "../../src/engine/realtime-pjsip-target.js";
import type { EngineProbe, EngineTarget, ReloadRequest } from "../../src/engine/target.js";

function recordingTarget() {
  const sent: string[] = [];
  const asked: EngineProbe[] = [];
  const target: EngineTarget = {
    kind: "ami",
    async reload(request: ReloadRequest) {
      sent.push(request.command.command);
      return { command: request.command.command, status: "ok", attempts: 1, durationMs: 0 };
    },
    async verify(probes) {
      asked.push(...probes);
      return probes.filter((p) => p.present);
    },
    async health() {
      return { status: "healthy", checkedAt: "2026-11-26T00:00:00.000Z" };
    },
    async close() {},
  };
  return { target, sent, asked };
}

test("module reload res_pjsip.so is sent as the identify module's reload; other reloads unchanged", async () => {
  const { target, sent } = recordingTarget();
  const realtime = realtimePjsipTarget(target);
  const pjsip = await realtime.reload({
    command: { module: "pjsip", command: "module reload res_pjsip.so" },
    units: ["top"],
  });
  assert.is(pjsip.command, IDENTIFY_RELOAD);
  await realtime.reload({ command: { module: "dialplan", command: "dialplan reload" }, units: [] });
  assert.equal(sent, [IDENTIFY_RELOAD, "dialplan reload"]);
});

test("endpoint probes of the files are not asked; the others are", async () => {
  const { target, asked } = recordingTarget();
  const realtime = realtimePjsipTarget(target);
  const probes: EngineProbe[] = [
    { kind: "endpoint", name: "org_x_101", present: false, path: "orgs/org_x_/pjsip.conf" },
    { kind: "context", name: "org_x_internal", present: true, path: "orgs/org_x_/extensions.conf" },
  ];
  const contradicted = await realtime.verify!(probes);
  assert.equal(
    asked.map((p) => p.kind),
    ["context"],
  );
  assert.equal(
    contradicted.map((p) => p.name),
    ["org_x_internal"],
  );
  assert.is(realtime.kind, "ami");
});

test.run();
