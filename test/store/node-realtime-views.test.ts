// Per-node realtime PJSIP (issue 25, src/store/node-realtime-views.ts): each engine node's
// Asterisk reads the `ps_*` rows through views of its own that show only the orgs it holds
// (primary, standby, a side of an unfinished move), and each node is owed its own expiries. The
// views are PostgreSQL (`npm run test:pg`); the schema names are checked on every backend.
import { randomBytes, randomUUID } from "node:crypto";
import { sql } from "kysely";
import { test } from "uvu";
import * as assert from "uvu/assert";
import {
  createEngineNode,
  deleteEngineNode,
  updateEngineNode,
} from "../../src/domain/nodes/engine-nodes.js";
import { moveOrg } from "../../src/domain/nodes/org-moves.js";
import { pinOrg } from "../../src/domain/nodes/placement.js";
import { createOrganizationRecord } from "../../src/domain/orgs/org-creation.js";
import { nodeRealtimeSchema } from "../../src/model/node-realtime.js";
import type { Db } from "../../src/store/database.js";
import { findOrgMove, updateOrgMove } from "../../src/store/org-move-repository.js";
import {
  createPjsipRealtimeRepository,
  type PjsipRow,
} from "../../src/store/pjsip-realtime-repository.js";
import { engineNodeInput, freshStore } from "./helpers.js";
import { testBackend } from "./test-database.js";

test("a node's schema: pbx_node_ and its name, unquoted; a long name ends with a hash", () => {
  assert.is(nodeRealtimeSchema("node-1"), "pbx_node_node_1");
  const long = `n${"a".repeat(60)}-2`;
  const schema = nodeRealtimeSchema(long);
  assert.ok(schema.length <= 63, schema);
  assert.match(schema, /^pbx_node_naaaa[a-z_]*_[0-9a-f]{8}$/);
  assert.is.not(schema, nodeRealtimeSchema(`n${"a".repeat(60)}-3`), "two long names differ");
  assert.throws(() => nodeRealtimeSchema("Node 1"), /not an engine node name/);
  assert.throws(() => nodeRealtimeSchema('x"; drop'), /not an engine node name/);
});

const serverKey = randomBytes(32);
const clock = () => new Date("2026-11-27T07:00:00.000Z");
const at = clock().toISOString();

/** The ids node `name`'s Asterisk sees in `table` (its view). */
async function seen(db: Db, name: string, table = "ps_endpoints"): Promise<string[]> {
  const rows = await sql<{ id: string }>`
    select id from ${sql.id(nodeRealtimeSchema(name))}.${sql.id(table)} order by id`.execute(db);
  return rows.rows.map((r) => r.id);
}

/** A user's endpoint, auth and AOR rows under `prefix`. */
function userRows(prefix: string, ext: string): PjsipRow[] {
  const id = `${prefix}${ext}`;
  return [
    { table: "ps_auths", id, columns: { id, auth_type: "digest", username: id, realm: "pbx" } },
    { table: "ps_aors", id, columns: { id, max_contacts: "1" } },
    {
      table: "ps_endpoints",
      id,
      columns: { id, context: `${prefix}internal`, auth: id, aors: id },
    },
  ];
}

async function createOrg(db: Db, name: string) {
  const created = await createOrganizationRecord(
    db,
    { name, slug: null, status: "active" },
    { serverKey, now: at },
  );
  const org = await db
    .selectFrom("organizations")
    .select(["id", "context_prefix"])
    .where("name", "=", name)
    .executeTakeFirstOrThrow();
  void created;
  return org;
}

if (testBackend() === "postgres") {
  test("each node's views show the rows of the orgs it holds only; a pin, a standby and a move change them", async () => {
    const store = await freshStore();
    try {
      const db = store.db;
      const deps = { db, config: { serverKey }, clock };
      const one = await createEngineNode(deps, engineNodeInput("node-1"));
      const two = await createEngineNode(deps, engineNodeInput("node-2"));
      // Least loaded, then by name: A on node-1, B on node-2.
      const a = await createOrg(db, "Org A");
      const b = await createOrg(db, "Org B");
      const rows = createPjsipRealtimeRepository(db);
      await rows.replaceOrgRows({
        orgId: a.id,
        prefix: a.context_prefix,
        rows: userRows(a.context_prefix, "101"),
        at,
      });
      await rows.replaceOrgRows({
        orgId: b.id,
        prefix: b.context_prefix,
        rows: userRows(b.context_prefix, "201"),
        at,
      });
      const a101 = `${a.context_prefix}101`;
      const b201 = `${b.context_prefix}201`;

      assert.equal(await seen(db, "node-1"), [a101]);
      assert.equal(await seen(db, "node-2"), [b201]);
      assert.equal(await seen(db, "node-1", "ps_auths"), [a101]);
      assert.equal(await seen(db, "node-2", "ps_aors"), [b201]);
      // Asterisk's own query shape (res_config_pgsql: unquoted schema.table, WHERE id = '...').
      const asked = await sql
        .raw<{ id: string }>(`SELECT * FROM pbx_node_node_2.ps_endpoints WHERE id = '${a101}'`)
        .execute(db);
      assert.is(asked.rows.length, 0, "node-2 never serves A's endpoint");

      // Each change is owed to the node holding the org only.
      const owed = await rows.pending();
      assert.equal(
        owed.filter((p) => p.id === a101).map((p) => p.nodeId),
        [one.id, one.id, one.id],
      );
      assert.equal(
        owed.filter((p) => p.id === b201).map((p) => p.nodeId),
        [two.id, two.id, two.id],
      );
      // One node's acknowledgement leaves the other's debt.
      await rows.acknowledge(await rows.pending({ nodeId: one.id }));
      assert.is((await rows.pending({ nodeId: one.id })).length, 0);
      assert.is((await rows.pending({ nodeId: two.id })).length, 3);
      await rows.acknowledge(await rows.pending({ nodeId: two.id }));

      // A standby holds a warm copy: node-2 sees A too, and A's changes are owed to both.
      await pinOrg(db, a.id, { node: "node-1", standby_node: "node-2" }, at);
      assert.equal(await seen(db, "node-2"), [a101, b201].sort());
      await rows.replaceOrgRows({
        orgId: a.id,
        prefix: a.context_prefix,
        rows: userRows(a.context_prefix, "101").map((r) =>
          r.table === "ps_auths" ? { ...r, columns: { ...r.columns, realm: "changed" } } : r,
        ),
        at,
      });
      assert.equal(
        (await rows.pending())
          .map((p) => `${p.nodeId === one.id ? "node-1" : "node-2"} ${p.kind}`)
          .sort(),
        ["node-1 auth", "node-2 auth"],
      );
      await rows.acknowledge(await rows.pending());
      await pinOrg(db, a.id, { node: "node-1", standby_node: null }, at);
      assert.equal(await seen(db, "node-2"), [b201]);

      // A move: the target sees A from its start; the source until the phase `removing`.
      await moveOrg({ db, clock }, a.id, { to: "node-2" });
      assert.equal(await seen(db, "node-1"), [a101]);
      assert.equal(await seen(db, "node-2"), [a101, b201].sort());
      const move = (await findOrgMove(db, a.id))!;
      await db
        .updateTable("org_placements")
        .set({ node_id: two.id, pinned: 1 })
        .where("org_id", "=", a.id)
        .execute();
      await updateOrgMove(db, move.id, { phase: "removing" });
      assert.equal(await seen(db, "node-1"), [], "the source stops serving A at `removing`");
      assert.equal(await seen(db, "node-2"), [a101, b201].sort());

      // The source's cache still holds A's objects: all of them are queued for node-1 alone.
      assert.is(await rows.queueOrgForNode(a.id, one.id, at), 3);
      assert.equal(
        (await rows.pending({ nodeId: one.id })).map((p) => `${p.kind} ${p.id}`).sort(),
        [`aor ${a101}`, `auth ${a101}`, `endpoint ${a101}`],
      );
      assert.is((await rows.pending({ nodeId: two.id })).length, 0);
      // Seen from node-1's view, A's endpoint is gone (what the flush's verification expects).
      assert.equal([...(await rows.existing("ps_endpoints", [a101], "node-1"))], []);
      assert.equal([...(await rows.existing("ps_endpoints", [a101], "node-2"))], [a101]);
    } finally {
      await store.close();
    }
  });

  test("a node's views follow its name, and go with the node", async () => {
    const store = await freshStore();
    try {
      const db = store.db;
      const deps = { db, config: { serverKey }, clock };
      await createEngineNode(deps, engineNodeInput("node-1"));
      await createEngineNode(deps, engineNodeInput("node-2"));
      const a = await createOrg(db, "Org A");
      await createPjsipRealtimeRepository(db).replaceOrgRows({
        orgId: a.id,
        prefix: a.context_prefix,
        rows: userRows(a.context_prefix, "101"),
        at,
      });
      await updateEngineNode(deps, "node-1", { name: "edge-east-1" });
      assert.equal(await seen(db, "edge-east-1"), [`${a.context_prefix}101`]);
      const schemas = async () =>
        (
          await sql<{ nspname: string }>`
            select nspname from pg_namespace where nspname like 'pbx_node_%' order by 1`.execute(db)
        ).rows.map((r) => r.nspname);
      assert.equal(await schemas(), ["pbx_node_edge_east_1", "pbx_node_node_2"]);
      // Removing a node drops its views.
      await deleteEngineNode(deps, "node-2");
      assert.equal(await schemas(), ["pbx_node_edge_east_1"]);
    } finally {
      await store.close();
    }
  });

  test("with no node defined, a change is owed to the one implicit engine (''), as before", async () => {
    const store = await freshStore();
    try {
      const db = store.db;
      const id = randomUUID();
      const a = await createOrg(db, `Org ${id}`);
      const rows = createPjsipRealtimeRepository(db);
      await rows.replaceOrgRows({
        orgId: a.id,
        prefix: a.context_prefix,
        rows: userRows(a.context_prefix, "101"),
        at,
      });
      assert.equal(
        (await rows.pending()).map((p) => p.nodeId),
        ["", "", ""],
      );
      assert.is((await rows.pending({ nodeId: "" })).length, 3);
    } finally {
      await store.close();
    }
  });
}

test.run();
