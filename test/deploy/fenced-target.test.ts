// The deployer's reloads and realtime PJSIP's cache expiries behind the lease fence
// (src/deploy/fenced-target.ts): each is sent only while the fence passes, and one that ran while
// the lease was lost under it is reported failed, so the deploy is not recorded as applied (nor
// the expiry acknowledged).
import { test } from "uvu";
import * as assert from "uvu/assert";
import { fencedTarget } from "../../src/deploy/fenced-target.js";
import { ReloadQueue } from "../../src/deploy/reload-queue.js";
import { fullReloadOf } from "../../src/deploy/reloads.js";
import type { EngineTarget, ReloadRequest } from "../../src/engine/target.js";

function recordingTarget(sent: string[], during?: () => void): EngineTarget {
  return {
    kind: "test",
    async reload({ command }: ReloadRequest) {
      sent.push(command.command);
      during?.();
      return { command: command.command, status: "ok", attempts: 1, durationMs: 0 };
    },
  } as unknown as EngineTarget;
}

test("a reload is sent only while the fence passes, and fails when the lease was lost while it ran", async () => {
  const sent: string[] = [];
  let holds = true;
  const fence = async () => {
    if (!holds) throw new Error("this replica no longer holds the deployer:files lease");
  };
  const queue = new ReloadQueue(fencedTarget(recordingTarget(sent), fence));
  const [ok] = await queue.run([fullReloadOf("pjsip")], "org_a_");
  assert.is(ok?.status, "ok");
  assert.is(sent.length, 1);

  holds = false;
  const [refused] = await queue.run([fullReloadOf("pjsip")], "org_a_");
  assert.is(refused?.status, "failed");
  assert.match(refused?.error ?? "", /no longer holds the deployer:files lease/);
  assert.is(sent.length, 1, "not sent");

  // Lost while the reload ran (another replica took over meanwhile): reported failed.
  holds = true;
  const late = new ReloadQueue(
    fencedTarget(
      recordingTarget(sent, () => {
        holds = false;
      }),
      fence,
    ),
  );
  const [lost] = await late.run([fullReloadOf("dialplan")], "org_a_");
  assert.is(lost?.status, "failed");
  assert.match(lost?.error ?? "", /ran after the deployer lease was lost/);
  assert.is(sent.length, 2);
});

/** The message `promise` rejects with; fails the test when it resolves. */
async function rejection(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (error) {
    return (error as Error).message;
  }
  assert.unreachable("resolved, expected a rejection");
  return "";
}

test("a cache expiry is sent only while the fence passes, and fails when the lease was lost while it ran", async () => {
  const sent: string[] = [];
  let holds = true;
  let loseWhileSending = false;
  const fence = async () => {
    if (!holds) throw new Error("this replica no longer holds the deployer:files lease");
  };
  const target = fencedTarget(
    {
      ...recordingTarget([]),
      async expireCachedObject(cache: string, id: string) {
        sent.push(`${cache} ${id}`);
        if (loseWhileSending) holds = false;
        return "expired" as const;
      },
    } as EngineTarget,
    fence,
  );
  assert.is(await target.expireCachedObject!("res_pjsip/endpoint", "org_a_101"), "expired");
  assert.equal(sent, ["res_pjsip/endpoint org_a_101"]);

  holds = false;
  assert.match(
    await rejection(target.expireCachedObject!("res_pjsip/auth", "org_a_101")),
    /no longer holds the deployer:files lease/,
  );
  assert.is(sent.length, 1, "not sent");

  holds = true;
  loseWhileSending = true;
  assert.match(
    await rejection(target.expireCachedObject!("res_pjsip/aor", "org_a_101")),
    /the expiry of res_pjsip\/aor org_a_101 ran after the deployer lease was lost/,
  );
  assert.is(sent.length, 2);
  // A target without expiries stays without them (the file deployer's).
  assert.is(fencedTarget(recordingTarget([]), fence).expireCachedObject, undefined);
});

test.run();
