// The helpers every resource uses (ARCHITECTURE.md "Adding a resource"): tenant ownership of a
// row, "commit, then schedule the deploy", defaults from the model schema, and the typed 409 of
// an extension collision.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { changeOrgConfig } from "../../src/domain/config/config-change.js";
import { assertValidAt } from "../../src/domain/config/config-validation.js";
import { BadRequest, Conflict, Forbidden, NotFound } from "../../src/domain/errors.js";
import { ownRow } from "../../src/domain/tenant-rows.js";
import { defaultOf, orDefault, withDefaults } from "../../src/model/defaults.js";
import { Ivr, type OrgState, Trunk, User } from "../../src/model/org-state.js";
import type { Db } from "../../src/store/database.js";
import { freshStore, insertOrg } from "../store/helpers.js";

const ORG = "11111111-1111-4111-8111-111111111111";
const OTHER = "22222222-2222-4222-8222-222222222222";

test("ownRow: the caller's row; 404 with the resource's message when none; 403 for another org's or no org's", () => {
  const row = { id: "r1", org_id: ORG };
  assert.is(ownRow(row, ORG, "Trunk not found"), row);
  assert.throws(
    () => ownRow(undefined, ORG, "Trunk not found"),
    (e: unknown) => {
      return e instanceof NotFound && e.message === "Trunk not found";
    },
  );
  assert.throws(
    () => ownRow(row, OTHER, "Trunk not found"),
    (e: unknown) => {
      return e instanceof Forbidden && e.message === "Access denied";
    },
  );
  assert.throws(
    () => ownRow({ id: "pool", org_id: null }, ORG, "DID not found"),
    (e: unknown) => e instanceof Forbidden,
  );
});

test("changeOrgConfig records the deploy in the write's transaction, schedules it after the commit, never for a rolled-back write, and survives a throwing scheduler", async () => {
  const store = await freshStore();
  try {
    const scheduled: string[] = [];
    const recordedThrough: Db[] = [];
    const deps = {
      db: store.db,
      deployScheduler: {
        recordDeploy: async (db: Db) => {
          recordedThrough.push(db);
        },
        scheduleDeploy: (id: string) => scheduled.push(id),
      },
    };
    await insertOrg(store.db, ORG);
    const name = await changeOrgConfig(deps, ORG, async (trx) => {
      await trx
        .updateTable("organizations")
        .set({ name: "Renamed" })
        .where("id", "=", ORG)
        .execute();
      assert.equal(scheduled, [], "nothing is scheduled before the commit");
      assert.equal(recordedThrough, [], "the deploy is recorded after the write");
      return "Renamed";
    });
    assert.is(name, "Renamed");
    assert.equal(scheduled, [ORG]);
    assert.is(recordedThrough.length, 1);
    assert.is.not(recordedThrough[0], store.db, "recorded through the write's transaction");

    await changeOrgConfig(deps, ORG, async (trx) => {
      await trx.updateTable("organizations").set({ name: "Lost" }).where("id", "=", ORG).execute();
      throw new Conflict("refused");
    }).then(
      () => assert.unreachable("the write threw"),
      (error: unknown) => assert.instance(error, Conflict),
    );
    assert.equal(scheduled, [ORG], "a rolled-back write schedules nothing");
    const row = await store.db.selectFrom("organizations").select("name").executeTakeFirst();
    assert.is(row?.name, "Renamed");

    // The record is part of the save: when it cannot be written, the save is undone with it.
    const unrecorded = {
      db: store.db,
      deployScheduler: {
        recordDeploy: async () => {
          throw new Error("store refused the request");
        },
        scheduleDeploy: (id: string) => scheduled.push(id),
      },
    };
    await changeOrgConfig(unrecorded, ORG, async (trx) => {
      await trx.updateTable("organizations").set({ name: "Unrecorded" }).execute();
    }).then(
      () => assert.unreachable("the record failed"),
      (error: unknown) => assert.match(String(error), /store refused the request/),
    );
    const kept = await store.db.selectFrom("organizations").select("name").executeTakeFirst();
    assert.is(kept?.name, "Renamed", "a save whose deploy was not recorded is rolled back");
    assert.equal(scheduled, [ORG]);

    const failing = {
      db: store.db,
      deployScheduler: {
        recordDeploy: async () => {},
        scheduleDeploy() {
          throw new Error("scheduler down");
        },
      },
    };
    assert.is(await changeOrgConfig(failing, ORG, async () => 42), 42, "the save still answers");
  } finally {
    await store.close();
  }
});

test("withDefaults fills what was omitted from the schema's defaults and changes nothing given", () => {
  const given = { name: "carrier", host: "sip.example.net", port: undefined };
  const trunk = withDefaults(Trunk, given);
  assert.equal(trunk, {
    name: "carrier",
    host: "sip.example.net",
    port: 5060,
    transport: "udp",
    username: null,
    registration: false,
    codecs: ["ulaw", "alaw"],
    match: [],
  });
  assert.equal(given, { name: "carrier", host: "sip.example.net", port: undefined });
  trunk.codecs.push("g722");
  assert.equal(
    withDefaults(Trunk, { name: "b", host: "h" }).codecs,
    ["ulaw", "alaw"],
    "defaults are copies",
  );
  assert.is(withDefaults(Trunk, { name: "c", host: "h", port: 5080 }).port, 5080);
  assert.is(defaultOf(Ivr, "timeout"), 10);
  assert.is(orDefault(Ivr, "max_retries", null), 3);
  assert.is(orDefault(Ivr, "max_retries", 0), 0, "0 is a value, not an omission");
});

test("an extension collision is a 409 by its diagnostic kind; other problems at the resource are 400s", () => {
  const user = (extension: string, name: string) => withDefaults(User, { extension, name });
  const state: OrgState = {
    org: {
      id: ORG,
      name: "Acme",
      context_prefix: `org_${ORG}_`,
      status: "active",
      settings: { recording_enabled: true, max_concurrent_calls: 0 },
    },
    users: [user("1001", "Alice"), user("1001", "Bob")],
    queues: [],
    ivrs: [],
    dids: [],
    trunks: [],
    outbound_routes: [],
    time_conditions: [],
  };
  assert.throws(
    () => assertValidAt(state, "users[1]"),
    (e: unknown) =>
      e instanceof Conflict && e.message === "Extension 1001 is already assigned to user 'Alice'",
  );
  state.users[1] = { ...user("1002", "Bob"), outbound_did: "+919999999999" };
  assert.throws(
    () => assertValidAt(state, "users[1]"),
    (e: unknown) => e instanceof BadRequest && /outbound_did/.test(e.message),
  );
});

test.run();
