// PJSIP keeps answering phones while app_queue works off a device-state storm (docs/engine.md
// "Device state at scale"): Asterisk's default `taskprocessor_overload_trigger = global` makes
// PJSIP ignore every new UDP request while any taskprocessor is over its high-water mark, and
// app_queue's device-state subscription is one after a `queue reload all` at 1,000 orgs
// (measured by `npm run bench:engine-profile`). The engine must have loaded engine init's
// `pjsip_only`, in both PJSIP modes.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { withEngine } from "./helpers.js";
import { startRealtimeDatabase } from "./realtime-rows.js";

const loadedTrigger = (settings: string) =>
  /^\s*taskprocessor_overload_trigger\s*:\s*(\S+)/m.exec(settings)?.[1];

test("file mode: PJSIP sheds load only for its own taskprocessors", async () => {
  await withEngine([], async (engine) => {
    assert.is(loadedTrigger(await engine.cli("pjsip show settings")), "pjsip_only");
    assert.equal(engine.problems(), []);
  });
});

test("realtime mode: the same global", async () => {
  const db = await startRealtimeDatabase();
  try {
    await withEngine(
      [],
      async (engine) => {
        assert.is(loadedTrigger(await engine.cli("pjsip show settings")), "pjsip_only");
        assert.equal(engine.problems(), []);
      },
      { pjsipDatabaseUrl: db.url },
    );
  } finally {
    await db.stop();
  }
});

test.run();
