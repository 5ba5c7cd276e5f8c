import { test } from "uvu";
import * as assert from "uvu/assert";
import {
  COLLECTION_KINDS,
  COLLECTION_NAMES,
  collectionAt,
  emptyCollections,
} from "../../src/model/collections.js";
import { deterministicId } from "../../src/model/fill.js";
import { OrgStateSchema } from "../../src/model/org-state.js";
import { checkOrgFileSchema } from "../../src/model/schema-check.js";
import { makeState, ORG_ID } from "./org-fixture.js";

test("every array of resources in OrgState is a collection of the registry", () => {
  const arrays = Object.entries(OrgStateSchema.properties)
    .filter(([, schema]) => schema.type === "array" && schema.items?.type === "object")
    .map(([name]) => name);
  assert.equal([...COLLECTION_NAMES].sort(), arrays.sort());
  assert.equal(Object.keys(emptyCollections()), [...COLLECTION_NAMES]);
});

test("a missing id is seeded by the collection's natural key", () => {
  const state = makeState((d) => {
    d.dids[0].number = "918065978001"; // the same DID however it is written
  });
  const did = state.dids[0]!;
  assert.is(did.id, deterministicId(ORG_ID, "did", COLLECTION_KINDS.dids.naturalKey(did)));
  assert.is(COLLECTION_KINDS.dids.naturalKey(did), "918065978001");
  const route = state.outbound_routes[0]!;
  assert.is(route.id, deterministicId(ORG_ID, "outbound_route", route.name));
});

test("a diagnostic path names its collection and index", () => {
  assert.equal(collectionAt("ivrs[2].options[0].digit"), { name: "ivrs", index: 2 });
  assert.equal(collectionAt("outbound_routes[0].trunk"), { name: "outbound_routes", index: 0 });
  assert.is(collectionAt("org.name"), undefined);
  assert.is(collectionAt("webhooks[0].url"), undefined);
});

test("a trunk's rules are the model's, in files as in the API: at most 50 match entries", () => {
  const file = (count: number) => ({
    org: { id: ORG_ID, name: "Acme" },
    trunks: [
      {
        name: "carrier",
        host: "sip.example.net",
        match: Array.from({ length: count }, (_, i) => `192.0.2.${i}`),
      },
    ],
  });
  assert.equal(checkOrgFileSchema(file(50)), []);
  const problems = checkOrgFileSchema(file(51));
  assert.ok(
    problems.some((p) => JSON.stringify(p).includes("trunks[0].match")),
    JSON.stringify(problems),
  );
});

test.run();
