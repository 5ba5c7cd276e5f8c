// The PJSIP-only load of an org (realtime PJSIP compiles it on every save): it must compile to
// the very rows and file of the whole org's state, so the compiler's PJSIP part reading a
// collection the loader leaves empty fails here, not as a phone refused in production.
import { randomBytes, randomUUID } from "node:crypto";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { syntheticOrg } from "../../bench/synthetic-org.js";
import { compileOrgPjsipRealtime } from "../../src/compiler/index.js";
import { applyOrgState } from "../../src/domain/config/apply.js";
import { loadOrgPjsipState, loadOrgState } from "../../src/store/load-org-state.js";
import { loadCase } from "../compiler/golden.js";
import { freshStore } from "./helpers.js";

const SERVER_KEY = randomBytes(32);

test("an org's PJSIP-only state compiles to the same rows and file as its whole state", async () => {
  const store = await freshStore();
  try {
    const orgs = [
      syntheticOrg(0),
      loadCase("16-injection-neutralised").orgs[0]!,
      ...loadCase("14-multi-org-gateway").orgs,
    ];
    let compared = 0;
    for (const org of orgs) {
      await applyOrgState(store.db, org, { serverKey: SERVER_KEY });
      const whole = compileOrgPjsipRealtime(await loadOrgState(store.db, org.org.id));
      const pjsipOnly = await loadOrgPjsipState(store.db, org.org.id);
      assert.ok(pjsipOnly, org.org.name);
      const partial = compileOrgPjsipRealtime(pjsipOnly);
      compared += whole.rows.length;
      assert.equal(partial.rows, whole.rows, org.org.name);
      assert.equal(partial.file, whole.file, org.org.name);
      assert.equal(partial.diagnostics, whole.diagnostics, org.org.name);
    }
    // 50 users of 3 rows each, trunks and the fixtures' own: not an empty comparison.
    assert.ok(compared > 150, `${compared} rows compared`);
  } finally {
    await store.close();
  }
});

test("the PJSIP-only state of an org that does not exist is null", async () => {
  const store = await freshStore();
  try {
    assert.is(await loadOrgPjsipState(store.db, randomUUID()), null);
  } finally {
    await store.close();
  }
});

test.run();
