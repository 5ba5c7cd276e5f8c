// Context prefixes never nest: an org's objects (realtime PJSIP rows, generated file names) are
// owned by prefix, so an org whose prefix begins another's would be handed that org's rows — and
// its next realtime save would delete them. Creation and `pbxctl apply` both refuse it (409).
import { randomBytes, randomUUID } from "node:crypto";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { syntheticOrg } from "../../bench/synthetic-org.js";
import { applyOrgState } from "../../src/domain/config/apply.js";
import { Conflict } from "../../src/domain/errors.js";
import { createOrganizationRecord } from "../../src/domain/orgs/org-creation.js";
import { prefixesNest } from "../../src/model/context-prefix-nesting.js";
import type { OrgState } from "../../src/model/org-state.js";
import { createOrganizationRepository } from "../../src/store/organization-repository.js";
import { freshStore, insertOrg } from "./helpers.js";

const SERVER_KEY = randomBytes(32);
const NOW = "2026-11-27T08:00:00.000Z";

let made = 0;

/** A synthetic org (numbers and addresses of its own) with this name and context prefix. */
function orgWith(name: string, prefix: string): OrgState {
  const base = syntheticOrg(made++);
  return {
    ...base,
    org: { ...base.org, id: randomUUID(), name, slug: undefined, context_prefix: prefix },
  };
}

async function refused(run: () => Promise<unknown>): Promise<string> {
  try {
    await run();
  } catch (error) {
    assert.instance(error, Conflict);
    return (error as Error).message;
  }
  throw new Error("expected a 409");
}

test("apply refuses a context prefix that begins, or begins with, another org's", async () => {
  const store = await freshStore();
  try {
    await applyOrgState(store.db, orgWith("Acme", "acme_"), { serverKey: SERVER_KEY });
    assert.is(
      await refused(() =>
        applyOrgState(store.db, orgWith("Acme X", "acme_x_"), { serverKey: SERVER_KEY }),
      ),
      "Context prefix acme_x_ overlaps acme_ of organization Acme: one organization's prefix may not begin another's",
    );
    // The same prefix under another org id (prefixes end in "_", so that is the only shorter
    // one): refused in words, not by the unique index.
    assert.match(
      await refused(() =>
        applyOrgState(store.db, orgWith("Acme 2", "acme_"), { serverKey: SERVER_KEY }),
      ),
      /^Context prefix acme_ overlaps acme_ of organization Acme:/,
    );
    // A sibling that shares letters but not the whole prefix is fine, and so is renaming an
    // org's own prefix to something apart.
    const beta = orgWith("Beta", "acmex_");
    await applyOrgState(store.db, beta, { serverKey: SERVER_KEY });
    await applyOrgState(
      store.db,
      { ...beta, org: { ...beta.org, context_prefix: "betacorp_" } },
      { serverKey: SERVER_KEY },
    );
    // Changing a prefix into another org's range is refused like a new one.
    assert.match(
      await refused(() =>
        applyOrgState(
          store.db,
          { ...beta, org: { ...beta.org, context_prefix: "acme_b_" } },
          { serverKey: SERVER_KEY },
        ),
      ),
      /^Context prefix acme_b_ overlaps acme_ /,
    );
    const prefixes = await store.db
      .selectFrom("organizations")
      .select("context_prefix")
      .orderBy("context_prefix")
      .execute();
    assert.equal(
      prefixes.map((row) => row.context_prefix),
      ["acme_", "betacorp_"],
    );
  } finally {
    await store.close();
  }
});

test("an org created with the default prefix is refused beside an org holding org_", async () => {
  const store = await freshStore();
  try {
    await applyOrgState(store.db, orgWith("Wide", "org_"), { serverKey: SERVER_KEY });
    assert.match(
      await refused(() =>
        createOrganizationRecord(
          store.db,
          { name: "Fresh", slug: null, status: "active" },
          { serverKey: SERVER_KEY, now: NOW },
        ),
      ),
      /^Context prefix org_[0-9a-f-]{36}_ overlaps org_ of organization Wide/,
    );
  } finally {
    await store.close();
  }
});

test("the store and pbxctl validate hold one rule: the repository answers as prefixesNest does", async () => {
  const store = await freshStore();
  try {
    // Prefixes that nest in every way, and near misses (a shared start that is not the whole).
    const stored = ["a_", "a_b_", "ab_", "b-c_", "b_", "Zz_9_"];
    for (const [k, prefix] of stored.entries()) {
      await insertOrg(store.db, randomUUID(), `Org ${k}`, prefix);
    }
    const asked = [...stored, "a_b_c_", "a_c_", "a", "b-", "b-c_d_", "zz_", "Zz_", "c_"];
    for (const prefix of asked) {
      const found = await createOrganizationRepository(store.db).nestingPrefix(prefix, null);
      const expected = stored.filter((other) => prefixesNest(prefix, other)).sort();
      assert.is(found?.context_prefix, expected[0], prefix);
      if (found) assert.ok(prefixesNest(prefix, found.context_prefix), prefix);
    }
  } finally {
    await store.close();
  }
});

test.run();
