// The org file schema's validator is ajv's standalone code, generated at build time
// (scripts/generate-org-file-validator.ts): it must be the code the schema compiles to today, and
// the problems it reports (read through `parentSchema` and `schemaPath`) and the defaults it
// fills must be those of the schema compiled at run time.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { Ajv } from "ajv";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { parse } from "yaml";
import {
  GENERATED_VALIDATOR,
  orgFileValidatorSource,
} from "../../scripts/generate-org-file-validator.js";
import {
  checkOrgFileSchema,
  ORG_FILE_AJV_OPTIONS,
  OrgFileSchema,
  readableErrors,
} from "../../src/model/schema-check.js";

const ROOT = join(import.meta.dirname, "..", "..");

test("the generated validator is the schema's current code (npm run generate:validator)", () => {
  assert.ok(
    readFileSync(GENERATED_VALIDATOR, "utf8") === orgFileValidatorSource(),
    "src/model/org-file-validator.generated.ts is stale: run `npm run generate:validator`",
  );
});

/** The example org with one change made by `change`. */
// biome-ignore lint/suspicious/noExplicitAny: edits anywhere in a parsed YAML document
function variant(change: (org: Record<string, any>) => void): unknown {
  const org = parse(readFileSync(join(ROOT, "orgs", "acme.yaml"), "utf8"));
  change(org);
  return org;
}

const broken: [string, unknown][] = [
  ["valid", variant(() => {})],
  [
    "not a mapping",
    variant((o) => {
      o.users = "nobody";
    }),
  ],
  [
    "unknown fields, wrong types, missing fields",
    variant((o) => {
      o.org.colour = "blue";
      o.users[0].extension = 12;
      delete o.users[1].name;
      o.queues[0].strategy = "loudest";
      o.dids[0].number = "12ab";
      o.trunks[0].match = ["10.0.0.1", "10.0.0.1"];
    }),
  ],
  [
    "unions of literals and nullables",
    variant((o) => {
      o.org.status = "sleeping";
      o.users[0].phone_number = 5;
      o.ivrs[0].options[0].action_type = "dance";
      o.org.settings = { ...o.org.settings, max_concurrent_calls: "many" };
    }),
  ],
  [
    "long and odd strings",
    variant((o) => {
      o.org.name = "x".repeat(200);
      o.users[0].name = "a\u0001b";
      o.org.slug = "Not A Slug";
    }),
  ],
];

test("generated and run-time compiled: the same problems and the same defaults filled", () => {
  const compiled = new Ajv(ORG_FILE_AJV_OPTIONS).compile(OrgFileSchema);
  for (const [name, data] of broken) {
    const forGenerated = structuredClone(data);
    const forCompiled = structuredClone(data);
    const problems = checkOrgFileSchema(forGenerated);
    const expected = compiled(forCompiled) ? [] : readableErrors(compiled.errors ?? []);
    assert.equal(problems, expected, name);
    assert.equal(forGenerated, forCompiled, `${name}: defaults`);
    if (name !== "valid") assert.ok(problems.length > 0, `${name} has problems`);
  }
});

test.run();
