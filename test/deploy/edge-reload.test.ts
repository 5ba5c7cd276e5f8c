// Kamailio's reload rate limit waited out (src/deploy/edge-reload.ts): a reload refused as
// `ongoing reload` is retried once the edge's reload_delta has passed, on injected timers, at
// most twice; any other refusal fails at once. Then through applyEdgeTables against the fake
// JSON-RPC edge, which refuses within the window as Kamailio 5.6 does: two carrier changes
// within 5 s are both applied, each by one apply. Nothing here sleeps.
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { buildEdgeTables, EDGE_RELOAD_DELTA_S } from "../../src/compiler/edge/index.js";
import { applyEdgeTables, type EdgeRpc, httpEdgeRpc } from "../../src/deploy/edge-apply.js";
import {
  EDGE_RELOAD_RETRIES,
  EDGE_RELOAD_WAIT_MS,
  isReloadRateLimited,
  reloadEdge,
} from "../../src/deploy/edge-reload.js";
import { EdgeRpcError } from "../../src/deploy/edge-rpc.js";
import { EDGE_LISTEN, startFakeEdge } from "./fake-edge.js";
import { FakeClock, untilArmed } from "./helpers.js";

const RATE_LIMITED = { code: 500, message: "ongoing reload" };

/** An edge whose reload answers `answers` in turn (a fault, or "ok"), recording each call. */
function scriptedEdge(...answers: Array<{ code: number; message: string } | "ok">) {
  const calls: string[] = [];
  const rpc: EdgeRpc = async (method) => {
    calls.push(method);
    const answer = answers.shift() ?? "ok";
    if (answer === "ok") return "Reload OK";
    throw new EdgeRpcError(`edge RPC ${method}: ${answer.code} ${answer.message}`, answer);
  };
  return { rpc, calls };
}

test("the wait is the reload_delta the generated kamailio.cfg sets, and a little over", () => {
  assert.ok(EDGE_RELOAD_WAIT_MS > EDGE_RELOAD_DELTA_S * 1000);
  assert.ok(EDGE_RELOAD_WAIT_MS <= EDGE_RELOAD_DELTA_S * 1000 + 1000);
});

test("both modules' rate-limit faults are recognised; nothing else is", () => {
  const error = (message: string) =>
    new EdgeRpcError(`edge RPC x: 500 ${message}`, { code: 500, message });
  assert.ok(isReloadRateLimited(error("ongoing reload")), "permissions' spelling");
  assert.ok(isReloadRateLimited(error("Ongoing reload")), "dispatcher's spelling");
  assert.not.ok(isReloadRateLimited(error("Reload Failed")));
  assert.not.ok(isReloadRateLimited(error("Not ready for reload")));
  assert.not.ok(
    isReloadRateLimited(new EdgeRpcError("edge RPC x at http://127.0.0.1:1/RPC: ongoing reload")),
    "not a fault the edge answered",
  );
  assert.not.ok(isReloadRateLimited(new Error("ongoing reload")));
});

test("a rate-limited reload is retried once the delta has passed, not before", async () => {
  const timers = new FakeClock();
  const edge = scriptedEdge(RATE_LIMITED, "ok");
  const waits: unknown[] = [];
  let done = false;
  const reload = reloadEdge(edge.rpc, "permissions.addressReload", {
    timers,
    onWait: (wait) => waits.push(wait),
  }).then(() => {
    done = true;
  });
  await untilArmed(() => timers.pendingTimers === 1);
  assert.equal(waits, [{ method: "permissions.addressReload", ms: EDGE_RELOAD_WAIT_MS, retry: 1 }]);
  timers.advance(EDGE_RELOAD_WAIT_MS - 1);
  await Promise.resolve();
  assert.equal(edge.calls, ["permissions.addressReload"], "not retried within the delta");
  timers.advance(1);
  await reload;
  assert.ok(done);
  assert.equal(edge.calls, ["permissions.addressReload", "permissions.addressReload"]);
});

test("any other refusal fails at once, with no wait", async () => {
  const timers = new FakeClock();
  const edge = scriptedEdge({ code: 500, message: "Reload Failed" });
  try {
    await reloadEdge(edge.rpc, "dispatcher.reload", { timers });
    assert.unreachable("a failed reload must fail");
  } catch (error) {
    assert.instance(error, EdgeRpcError);
    assert.is((error as Error).message, "edge RPC dispatcher.reload: 500 Reload Failed");
  }
  assert.is(timers.pendingTimers, 0);
  assert.equal(edge.calls, ["dispatcher.reload"]);
});

test("retries are bounded: still refused after the last, it fails saying so", async () => {
  const timers = new FakeClock();
  const refusals = Array.from({ length: EDGE_RELOAD_RETRIES + 1 }, () => ({
    code: 500,
    message: "Ongoing reload",
  }));
  const edge = scriptedEdge(...refusals, "ok");
  let failure: unknown = null;
  const reload = reloadEdge(edge.rpc, "dispatcher.reload", { timers }).catch((error) => {
    failure = error;
  });
  for (let retry = 1; retry <= EDGE_RELOAD_RETRIES; retry++) {
    await untilArmed(() => timers.pendingTimers === 1);
    timers.advance(EDGE_RELOAD_WAIT_MS);
  }
  await reload;
  assert.is(edge.calls.length, EDGE_RELOAD_RETRIES + 1);
  assert.instance(failure, EdgeRpcError);
  assert.match(
    (failure as Error).message,
    `edge RPC dispatcher.reload: 500 Ongoing reload (still refused after ${EDGE_RELOAD_RETRIES} retries`,
  );
  assert.is(timers.pendingTimers, 0);
});

test("the retry is checked first (a lease) and a stop abandons the wait", async () => {
  const timers = new FakeClock();
  const fenced = scriptedEdge(RATE_LIMITED);
  const lost = new Error("this replica no longer holds the lease");
  let fenceFailure: unknown = null;
  const withFence = reloadEdge(fenced.rpc, "permissions.addressReload", {
    timers,
    beforeRetry: () => Promise.reject(lost),
  }).catch((error) => {
    fenceFailure = error;
  });
  await untilArmed(() => timers.pendingTimers === 1);
  timers.advance(EDGE_RELOAD_WAIT_MS);
  await withFence;
  assert.is(fenceFailure, lost);
  assert.equal(fenced.calls, ["permissions.addressReload"], "no retry without the lease");

  const stopped = scriptedEdge(RATE_LIMITED);
  const abort = new AbortController();
  let stopFailure: unknown = null;
  const waiting = reloadEdge(stopped.rpc, "permissions.addressReload", {
    timers,
    signal: abort.signal,
  }).catch((error) => {
    stopFailure = error;
  });
  await untilArmed(() => timers.pendingTimers === 1);
  const reason = new Error("the edge sync stopped");
  abort.abort(reason);
  await waiting;
  assert.is(stopFailure, reason);
  assert.is(timers.pendingTimers, 0, "the wait's timer is cancelled");
});

const tablesWith = (carriers: string[]) =>
  buildEdgeTables({ nodes: [], orgs: [], carriers, listen: EDGE_LISTEN }, []);

test("two carrier changes within the delta: each apply goes in, the second after the wait", async () => {
  const dir = mkdtempSync(join(tmpdir(), "pbx-edge-reload-"));
  mkdirSync(join(dir, "db"));
  const timers = new FakeClock();
  const T0 = Date.parse("2026-03-01T10:00:00.500Z");
  const edge = await startFakeEdge(dir, { now: () => T0 + timers.now() });
  try {
    const rpc = httpEdgeRpc(`http://127.0.0.1:${edge.port}/RPC`);
    const first = await applyEdgeTables(rpc, dir, tablesWith(["203.0.113.5"]), { timers });
    assert.is(first.carriersReloaded, true);
    assert.is(timers.pendingTimers, 0, "the first reload was not refused");

    timers.advance(1500); // a second carrier 1.5 s later: inside Kamailio's window
    let second: Awaited<ReturnType<typeof applyEdgeTables>> | null = null;
    const applying = applyEdgeTables(rpc, dir, tablesWith(["203.0.113.5", "203.0.113.6"]), {
      timers,
    }).then((result) => {
      second = result;
    });
    await untilArmed(() => timers.pendingTimers === 1);
    assert.equal(
      edge.calls.filter((call) => call === "permissions.addressReload"),
      ["permissions.addressReload", "permissions.addressReload"],
      "refused once, as Kamailio refuses it",
    );
    assert.is(second, null, "waiting, not failed");
    timers.advance(EDGE_RELOAD_WAIT_MS);
    await applying;
    assert.is(second!.carriersReloaded, true);
    assert.is(
      edge.calls.filter((call) => call === "permissions.addressReload").length,
      3,
      "retried once, and read back",
    );
    const exact = (await rpc("permissions.addressDump")) as Array<{ item: { ip: string } }>;
    assert.equal(exact.map((entry) => entry.item.ip).sort(), ["203.0.113.5", "203.0.113.6"]);
  } finally {
    await edge.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test.run();
