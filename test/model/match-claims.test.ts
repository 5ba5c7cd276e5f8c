// The index of claimed trunk addresses answers as a scan of every earlier claim in order would.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { claimedElsewhere, MatchClaims, trunkClaims } from "../../src/model/match-claims.js";
import { matchesOverlap } from "../../src/model/trunk-identify.js";

/** A fixed pseudo-random sequence (the same entries on every run). */
function* numbers(seed: number): Generator<number> {
  let state = seed;
  for (;;) {
    state = (state * 1103515245 + 12345) % 2147483648;
    yield state;
  }
}

/** Entries from a small space, so that many overlap: blocks, addresses, IPv6, names. */
function entries(count: number): string[] {
  const random = numbers(7);
  const next = (below: number) => (random.next().value as number) % below;
  const made: string[] = [];
  for (let i = 0; i < count; i++) {
    const kind = next(10);
    const octet = () => next(4);
    if (kind < 6) {
      const address = `10.${octet()}.${octet()}.${octet()}`;
      made.push(next(2) === 0 ? address : `${address}/${8 + next(25)}`);
    } else if (kind < 8) {
      const address = `2001:db8::${next(4).toString(16)}:${next(4)}`;
      made.push(next(2) === 0 ? `[${address}]` : `${address}/${96 + next(33)}`);
    } else {
      made.push(["sip.example.com", "SIP.example.COM", "carrier.example"][next(3)]!);
    }
  }
  return made;
}

test("the first overlapping claim is the one a scan in order finds", () => {
  const claims = new MatchClaims<number>();
  const earlier: string[] = [];
  let overlaps = 0;
  for (const [k, entry] of entries(600).entries()) {
    const scanned = earlier.findIndex((claim) => matchesOverlap(entry, claim));
    const found = claims.firstOverlapping(entry);
    assert.is(found, scanned < 0 ? undefined : scanned, `${entry} (entry ${k})`);
    if (found !== undefined) overlaps++;
    claims.add(entry, k);
    earlier.push(entry);
  }
  // The sample has both outcomes, or it would prove nothing.
  assert.ok(overlaps > 100 && overlaps < 600, `${overlaps} overlaps`);
});

test("a block finds a claim inside it and a claim holding it; apart blocks find nothing", () => {
  const claims = new MatchClaims<string>();
  claims.add("203.0.113.10", "a.yaml");
  claims.add("198.51.100.0/24", "b.yaml");
  assert.is(claims.firstOverlapping("203.0.113.0/24"), "a.yaml");
  assert.is(claims.firstOverlapping("198.51.100.7"), "b.yaml");
  assert.is(claims.firstOverlapping("0.0.0.0/0"), "a.yaml");
  assert.is(claims.firstOverlapping("203.0.113.11"), undefined);
  assert.is(claims.firstOverlapping("[::ffff:203.0.113.10]"), undefined);
});

test("a trunk's first identify match another org's trunk claims; a registering trunk's host name claims nothing", () => {
  const others = trunkClaims([
    { host: "sip.carrier.example", registration: undefined, match: ["198.51.100.0/24"] },
    { host: "203.0.113.5", registration: { username: "u" }, match: [] },
    { host: "registrar.example", registration: { username: "u" }, match: [] },
  ] as never);
  const trunk = (host: string, match: string[], registration?: object) =>
    ({ host, match, registration }) as never;
  assert.is(
    claimedElsewhere(trunk("10.0.0.1", ["198.51.100.9", "203.0.113.0/28"]), others),
    "198.51.100.9",
  );
  assert.is(claimedElsewhere(trunk("SIP.Carrier.example", []), others), "SIP.Carrier.example");
  assert.is(claimedElsewhere(trunk("203.0.113.5", [], { username: "x" }), others), "203.0.113.5");
  assert.is(claimedElsewhere(trunk("registrar.example", ["192.0.2.1"]), others), undefined);
});

test.run();
