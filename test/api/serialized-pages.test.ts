// The pages of an unchanging (frozen) listing are serialized once: the same bytes for the same
// window, exactly what JSON.stringify of the page gives, and nothing kept for a listing that
// may change.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { paginate } from "../../src/api/pagination.js";
import { isUnchangingListing, serializedPage } from "../../src/api/serialized-pages.js";

const rows = Object.freeze([{ id: "a" }, { id: "b" }, { id: "c" }]);

test("a window's page is serialized once and is JSON.stringify of the page", () => {
  const page = serializedPage(rows, { limit: 2, offset: 1 }, "envelope");
  assert.is(serializedPage(rows, { limit: 2, offset: 1 }, "envelope"), page, "kept");
  assert.is(
    page.bytes.toString("utf8"),
    JSON.stringify(paginate(rows, { limit: 2, offset: 1 }, "envelope").body),
  );
  assert.is(page.total, "3");
});

test("each window and each style is its own page", () => {
  const envelope = serializedPage(rows, { limit: 1 }, "envelope");
  const array = serializedPage(rows, { limit: 1 }, "array");
  assert.equal(JSON.parse(array.bytes.toString()), [{ id: "a" }]);
  assert.equal(JSON.parse(envelope.bytes.toString()).data, [{ id: "a" }]);
  assert.equal(
    JSON.parse(serializedPage(rows, { limit: 1, offset: 2 }, "array").bytes.toString()),
    [{ id: "c" }],
  );
});

test("only a frozen array is an unchanging listing", () => {
  assert.ok(isUnchangingListing(rows));
  assert.not.ok(isUnchangingListing([{ id: "a" }]));
  assert.not.ok(isUnchangingListing(Object.freeze({ rows: [] })));
});

test.run();
