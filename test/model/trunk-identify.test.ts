// Which addresses a trunk's identify section claims, and when two claims overlap (CIDR).
import { test } from "uvu";
import * as assert from "uvu/assert";
import { identifyMatches, matchesOverlap } from "../../src/model/trunk-identify.js";

test("the identify list: the host when it identifies the trunk, then `match`", () => {
  const trunk = {
    host: "203.0.113.10",
    registration: false,
    match: ["203.0.113.10", "10.0.0.0/8"],
  };
  assert.equal(identifyMatches(trunk), ["203.0.113.10", "10.0.0.0/8"]);
  // A registering trunk with a host name is identified by its line, not by that name.
  assert.equal(identifyMatches({ host: "sip.example", registration: true, match: [] }), []);
  assert.equal(identifyMatches({ host: "[2001:db8::1]", registration: true, match: [] }), [
    "[2001:db8::1]",
  ]);
});

test("overlap: equal addresses, an address in a range, ranges that intersect", () => {
  const overlapping: [string, string][] = [
    ["203.0.113.10", "203.0.113.10"],
    ["203.0.113.10", "203.0.113.0/24"],
    ["203.0.113.0/25", "203.0.112.0/23"],
    ["0.0.0.0/0", "192.0.2.1"],
    ["[2001:db8::1]", "2001:db8:0:0:0:0:0:1/128"],
    ["2001:db8::/32", "[2001:db8:ffff::7]"],
    ["[::ffff:192.0.2.1]", "::ffff:192.0.2.0/120"],
    ["SIP.Example.COM", "sip.example.com"],
  ];
  for (const [a, b] of overlapping) {
    assert.ok(matchesOverlap(a, b), `${a} ~ ${b}`);
    assert.ok(matchesOverlap(b, a), `${b} ~ ${a}`);
  }
  const apart: [string, string][] = [
    ["203.0.113.10", "203.0.113.11"],
    ["203.0.113.0/25", "203.0.113.128/25"],
    ["192.0.2.1", "[::ffff:192.0.2.1]"],
    ["sip.example.com", "203.0.113.10"],
    ["2001:db8::/32", "2001:db9::/32"],
  ];
  for (const [a, b] of apart) {
    assert.not.ok(matchesOverlap(a, b), `${a} !~ ${b}`);
    assert.not.ok(matchesOverlap(b, a), `${b} !~ ${a}`);
  }
});

test.run();
