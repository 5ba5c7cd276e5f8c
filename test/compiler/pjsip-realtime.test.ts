// The realtime form of PJSIP (src/compiler/pjsip-realtime.ts): the same objects as pjsip.conf,
// raw values, the split between rows and the file, and one user's rows for a store to replace.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { compileOrgPjsipRealtime, userPjsipRows } from "../../src/compiler/index.js";
import { pjsipObjects } from "../../src/compiler/pjsip.js";
import { REALTIME_COLUMNS, REALTIME_PLACEMENT } from "../../src/compiler/pjsip-realtime.js";
import { loadCase } from "./golden.js";

const injection = loadCase("16-injection-neutralised").orgs[0]!;
const gateway = loadCase("14-multi-org-gateway").orgs;

test("every object is a row or stays in the file, none lost and none twice", () => {
  for (const org of [injection, ...gateway]) {
    const objects = pjsipObjects(org, []).flatMap((owner) => owner.objects);
    const { rows, file } = compileOrgPjsipRealtime(org);
    const inFile = objects.filter((o) => REALTIME_PLACEMENT[o.type] === "file");
    assert.is(rows.length + inFile.length, objects.length);
    for (const o of inFile) assert.match(file.content, `[${o.id}]\ntype=${o.type}\n`);
    assert.not.match(file.content, /type=(endpoint|auth|aor|registration)/);
  }
});

test("row values are raw: a `;` is not escaped as pjsip.conf needs", () => {
  const auth = compileOrgPjsipRealtime(injection).rows.find(
    (row) => row.table === "ps_auths" && row.id.endsWith("trunk_carrier"),
  );
  assert.is(auth?.columns.password, "p;--[x]=$");
});

test("every column a row uses is one of pbxctl's realtime columns", () => {
  for (const org of [injection, ...gateway]) {
    for (const row of compileOrgPjsipRealtime(org).rows) {
      for (const column of Object.keys(row.columns)) {
        assert.ok(REALTIME_COLUMNS[row.table].includes(column), `${row.table}.${column}`);
      }
      assert.is(Object.keys(row.columns)[0], "id");
    }
  }
});

test("one user's rows are its endpoint, auth and AOR as in the org's rows", () => {
  const prefix = injection.org.context_prefix;
  const rows = userPjsipRows(injection, "101");
  assert.equal(
    rows.map((row) => `${row.table}/${row.id}`),
    [`ps_aors/${prefix}101`, `ps_auths/${prefix}101`, `ps_endpoints/${prefix}101`],
  );
  const all = compileOrgPjsipRealtime(injection).rows;
  for (const row of rows) assert.ok(all.some((r) => JSON.stringify(r) === JSON.stringify(row)));
  assert.equal(userPjsipRows(injection, "999"), [], "an unknown user has no rows");
  const inactive = {
    ...injection,
    users: injection.users.map((u) => ({ ...u, status: "inactive" as const })),
  };
  assert.equal(userPjsipRows(inactive, "101"), [], "an inactive user has no rows");
});

test("a control character in a value is refused, in either form", () => {
  const bad = {
    ...injection,
    trunks: injection.trunks.map((t) => ({ ...t, password: "a\nb" })),
  };
  assert.throws(() => compileOrgPjsipRealtime(bad), /control character/);
});

test.run();
