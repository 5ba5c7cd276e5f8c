// Which reload each changed file needs (ASTERISK.md "Reloads"); never `core reload`.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { type FileChange, mergeReloads, reloadsFor } from "../../src/deploy/reloads.js";

const change = (path: string, before: string | null, after: string | null): FileChange => ({
  path,
  before,
  after,
});
const commands = (changes: FileChange[]) => reloadsFor(changes).map((c) => c.command);

test("each config file maps to its module's reload, in a fixed order, once per module", () => {
  assert.equal(
    commands([
      change("orgs/p_/voicemail.conf", "a", "b"),
      change("orgs/p_/extensions.conf", "a", "b"),
      change("orgs/q_/extensions.conf", "a", "b"),
      change("orgs/p_/pjsip.conf", "a", "b"),
    ]),
    ["module reload res_pjsip.so", "dialplan reload", "module reload app_voicemail.so"],
  );
});

test("an org's music-on-hold file reloads res_musiconhold, before what names its class", () => {
  assert.equal(
    commands([
      change("orgs/p_/queues.conf", "[p_q1]\nmusicclass=default\n", "[p_q1]\nmusicclass=p_moh\n"),
      change("orgs/p_/musiconhold.conf", "; header\n", "; header\n\n[p_moh]\nmode=files\n"),
      change("orgs/p_/extensions.conf", "a", "b"),
    ]),
    ["module reload res_musiconhold.so", "dialplan reload", "queue reload all p_q1"],
  );
  assert.equal(commands([change("musiconhold.conf", "", '#include "orgs/p_/musiconhold.conf"')]), [
    "module reload res_musiconhold.so",
  ]);
});

test("unchanged content and unknown files reload nothing", () => {
  assert.equal(
    commands([change("orgs/p_/pjsip.conf", "same", "same"), change("notes.txt", "a", "b")]),
    [],
  );
});

test("queues are reloaded by name, unless a queue was removed or the include file changed", () => {
  const before = "[p_q1]\nstrategy=ringall\n\n[p_q2]\nstrategy=ringall\n";
  assert.equal(
    commands([
      change(
        "orgs/p_/queues.conf",
        before,
        before.replace("[p_q2]\nstrategy=ringall", "[p_q2]\nstrategy=linear"),
      ),
    ]),
    ["queue reload all p_q2"],
  );
  assert.equal(commands([change("orgs/p_/queues.conf", before, "[p_q1]\nstrategy=ringall\n")]), [
    "queue reload all",
  ]);
  assert.equal(commands([change("queues.conf", "#include a", "#include a\n#include b")]), [
    "queue reload all",
  ]);
});

test("two changed queues are one full reload: app_queue reloads only the first name it is given", () => {
  const before = "[p_q1]\nstrategy=ringall\n\n[p_q2]\nstrategy=ringall\n";
  assert.equal(
    commands([change("orgs/p_/queues.conf", before, before.replaceAll("ringall", "linear"))]),
    ["queue reload all"],
  );
  assert.equal(
    commands([change("orgs/p_/queues.conf", before, `${before}\n[p_q3]\nstrategy=linear\n`)]),
    ["queue reload all p_q3"],
  );
});

test("units deployed together reload one named queue only when they name the same one", () => {
  const named = (name: string) => [
    { module: "queues" as const, command: `queue reload all ${name}` },
  ];
  assert.equal(
    mergeReloads([named("p_q1"), named("p_q1")]).map((c) => c.command),
    ["queue reload all p_q1"],
  );
  // 500 orgs' queues by name would be a 24,000-byte AMI line; one full reload is one short line.
  const many = Array.from({ length: 500 }, (_, i) =>
    named(`org_${String(i).padStart(36, "0")}_q6000`),
  );
  assert.equal(
    mergeReloads(many).map((c) => c.command),
    ["queue reload all"],
  );
});

test("no change ever asks for a core reload", () => {
  const all = commands([
    change("extensions.conf", "a", "b"),
    change("pjsip.conf", "a", "b"),
    change("queues.conf", "a", "b"),
    change("voicemail.conf", "a", "b"),
    change("musiconhold.conf", "a", "b"),
  ]);
  assert.ok(all.every((c) => !c.startsWith("core reload")));
});

test.run();
