// Which addresses identify a trunk's inbound traffic. Asterisk resolves host names in an identify
// `match` at load and warns for one that does not resolve, so a name appears there only when
// nothing else identifies the trunk (it does not register).
import { test } from "uvu";
import * as assert from "uvu/assert";
import { compileOrg } from "../../src/compiler/index.js";
import { makeState, type RawOrg } from "../model/org-fixture.js";

function identifyOf(trunk: RawOrg): string | null {
  const state = makeState((data) => {
    data.trunks = [{ name: "carrier", ...trunk }];
  });
  const pjsip = compileOrg(state).files.find((f) => f.path.endsWith("pjsip.conf"))!.content;
  const section = pjsip
    .split("\n\n")
    .find((block) => block.includes("type=identify") && block.includes("_trunk_carrier]"));
  if (!section) return null;
  return /^match=(.*)$/m.exec(section)?.[1] ?? "";
}

test("a trunk that does not register is identified by its host, names included", () => {
  assert.is(identifyOf({ host: "sip.example.net" }), "sip.example.net");
  assert.is(
    identifyOf({ host: "sip.example.net", match: ["198.51.100.0/24"] }),
    "sip.example.net,198.51.100.0/24",
  );
});

test("a registering trunk is identified by its line: no host name in match", () => {
  const registering = { host: "sip.example.net", username: "acme", registration: true };
  assert.is(identifyOf(registering), null, "no identify section at all");
  assert.is(identifyOf({ ...registering, match: ["198.51.100.0/24"] }), "198.51.100.0/24");
  // A name the operator lists explicitly is kept.
  assert.is(identifyOf({ ...registering, match: ["sip.example.net"] }), "sip.example.net");
  // An address needs no lookup, so it still identifies the trunk.
  assert.is(identifyOf({ ...registering, host: "203.0.113.5" }), "203.0.113.5");
});

test.run();
