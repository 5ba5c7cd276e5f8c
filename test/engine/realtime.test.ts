// Realtime PJSIP on a real Asterisk 22 and a throwaway PostgreSQL 15: the files of `pbxctl engine
// init --pjsip realtime` boot with no WARNING or ERROR, the compiler's rows (pbxctl's text columns)
// serve a phone's REGISTER with its digest, a wrong password is refused, and a user whose rows
// are inserted after boot registers with no reload. This is the proof that the rows of
// src/compiler/pjsip-realtime.ts are what Asterisk's realtime reads.
import { suite } from "uvu";
import * as assert from "uvu/assert";
import {
  compileAll,
  compileOrgPjsipRealtime,
  type RealtimeRow,
  userPjsipRows,
} from "../../src/compiler/index.js";
import { REALTIME_COLUMNS } from "../../src/compiler/pjsip-realtime.js";
import type { AsteriskInstance } from "../../src/engine/testing/asterisk-instance.js";
import { loadOrgSources } from "../../src/model/files.js";
import type { OrgState } from "../../src/model/org-state.js";
import { sipDigest } from "../../src/model/secrets.js";
import { registrationOutcome } from "./baresip.js";
import { boot } from "./helpers.js";
import { literal, type Postgres, startPostgres } from "./postgres.js";

const ORG = "aaaaaaaa-0000-4000-8000-000000000001";
const PREFIX = `org_${ORG}_`;
const password = (extension: string) => `pw-${extension}`;
const cred = (extension: string) => sipDigest(`${PREFIX}${extension}`, password(extension));

const ORG_YAML = `
org: { id: ${ORG}, name: Acme, context_prefix: ${PREFIX} }
users:
  - { extension: "101", name: Alice, sip: { md5_cred: ${cred("101")} } }
  - { extension: "102", name: Bob, sip: { md5_cred: ${cred("102")} } }
trunks: [ { name: carrier, host: 127.0.0.2, port: 5099 } ]
`;

interface Context {
  db: Postgres;
  engine: AsteriskInstance;
  state: OrgState;
}

const test = suite<Context>("realtime pjsip");

/** pbxctl's realtime tables: Asterisk's names and columns, every column text of any length. */
function createTables(): string {
  return Object.entries(REALTIME_COLUMNS)
    .map(
      ([table, columns]) =>
        `CREATE TABLE ${table} (${columns.map((c) => (c === "id" ? "id text PRIMARY KEY" : `"${c}" text`)).join(", ")});`,
    )
    .join("\n");
}

function insertRows(rows: readonly RealtimeRow[]): string {
  return rows
    .map((row) => {
      const entries = Object.entries(row.columns);
      return `INSERT INTO ${row.table} (${entries.map(([c]) => `"${c}"`).join(", ")}) VALUES (${entries.map(([, v]) => literal(v)).join(", ")});`;
    })
    .join("\n");
}

function register(context: Context, extension: string, secret: string): Promise<string> {
  return registrationOutcome({
    user: `${PREFIX}${extension}`,
    password: secret,
    registrar: `127.0.0.1:${context.engine.sipPort}`,
  });
}

test.before(async (context) => {
  const loaded = loadOrgSources([{ file: "acme.yaml", text: ORG_YAML }], {});
  const errors = loaded.diagnostics.filter((d) => d.severity === "error");
  if (errors.length > 0) throw new Error(errors.map((d) => d.message).join("; "));
  const state = loaded.orgs[0]!.state;
  context.state = state;
  // As behind the SIP edge (PBX_EDGE_DIR): the AOR rows carry support_path, which realtime must
  // read like any other column (a phone registering straight to the node needs no Path).
  const realtime = compileOrgPjsipRealtime(state, { behindEdge: true });
  assert.equal(realtime.diagnostics, []);
  // The generated tree as a realtime deploy would write it: the org's pjsip.conf keeps only
  // what stays a file (the trunk's identify).
  const files = compileAll([state], {
    environment: "prod",
    staging_endpoint: "staging-tunnel",
  }).files.map((file) => (file.path === realtime.file.path ? realtime.file : file));
  context.db = await startPostgres();
  // Bob's rows come later: a user saved while the engine runs.
  const bobIds = new Set(
    userPjsipRows(state, "102", { behindEdge: true }).map((row) => `${row.table}/${row.id}`),
  );
  const atBoot = realtime.rows.filter((row) => !bobIds.has(`${row.table}/${row.id}`));
  await context.db.sql(`${createTables()}\n${insertRows(atBoot)}`);
  context.engine = await boot(files, { pjsipDatabaseUrl: context.db.url });
});

test.after(async (context) => {
  await context.engine?.stop();
  await context.db?.stop();
});

test("the realtime engine boots with no WARNING/ERROR and loads the realtime modules", async (context) => {
  assert.equal(context.engine.problems(), [], context.engine.problems().join("\n"));
  const modules = await context.engine.cli("module show like sorcery");
  for (const name of ["res_sorcery_realtime.so", "res_sorcery_memory_cache.so"]) {
    assert.match(modules, name);
  }
  assert.match(await context.engine.cli("module show like pgsql"), "res_config_pgsql.so");
  const endpoint = await context.engine.cli(`pjsip show endpoint ${PREFIX}101`);
  assert.match(endpoint, new RegExp(`context +: ${PREFIX}internal`), endpoint);
  // The trunk's endpoint is a row; its identify by address stays in the file and names it.
  const trunk = await context.engine.cli(`pjsip show endpoint ${PREFIX}trunk_carrier`);
  assert.match(trunk, new RegExp(`context +: ${PREFIX}incoming`), trunk);
  assert.match(trunk, "127.0.0.2", trunk);
});

test("a phone registers with the digest from its row; a wrong password is refused", async (context) => {
  assert.is(await register(context, "101", "not-the-password"), "REGISTER_FAIL");
  assert.is(await register(context, "101", password("101")), "REGISTER_OK");
  const aor = await context.engine.cli(`pjsip show aor ${PREFIX}101`);
  assert.match(aor, `sip:${PREFIX}101`, aor);
  assert.match(aor, /support_path\s+:\s+true/, "the row's support_path is read");
});

test("a user's rows inserted while the engine runs register with no reload", async (context) => {
  const since = context.engine.log().length;
  await context.db.sql(insertRows(userPjsipRows(context.state, "102", { behindEdge: true })));
  const queriesSince = context.db.log().length;
  assert.is(await register(context, "102", password("102")), "REGISTER_OK");
  // disable_multi_domain: username identification looks up the endpoint id itself, never a
  // `<user>@<domain>` that would miss (uncached) on every REGISTER.
  const queries = context.db.log().slice(queriesSince);
  assert.match(queries, `FROM ps_endpoints WHERE id = '${PREFIX}102'`, queries);
  assert.not.match(queries, `'${PREFIX}102@`, queries);
  const log = context.engine.log().slice(since);
  assert.not.match(log, /[Rr]eload/, "nothing was reloaded");
  assert.equal(context.engine.problems(since), []);
});

test.run();
