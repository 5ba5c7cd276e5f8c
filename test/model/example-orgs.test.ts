import { test } from "uvu";
import * as assert from "uvu/assert";
import { formatDiagnostic, loadOrgPaths } from "../../src/model/files.js";

test("the shipped example orgs load without a single diagnostic", async () => {
  const root = new URL("../../orgs", import.meta.url).pathname;
  const result = await loadOrgPaths([root], {});
  assert.equal(result.diagnostics.map(formatDiagnostic), []);
  assert.equal(
    result.orgs.map((o) => o.state.org.slug),
    ["acme", "globex"],
  );
  // Every feature the format offers appears in them.
  const all = result.orgs.map((o) => o.state);
  const options = all.flatMap((s) => s.ivrs.flatMap((i) => i.options));
  for (const type of ["extension", "queue", "ivr", "ai_agent", "voicemail", "callback", "hangup"]) {
    assert.ok(
      options.some((o) => o.action_type === type),
      `an option of type ${type}`,
    );
  }
  const queues = all.flatMap((s) => s.queues);
  for (const type of ["none", "user", "queue", "phone"]) {
    assert.ok(
      queues.some((q) => q.timeout_destination_type === type),
      `a queue timeout ${type}`,
    );
  }
  const users = all.flatMap((s) => s.users);
  assert.ok(users.some((u) => u.routing_type === "ai_agent"));
  assert.ok(users.some((u) => u.ring_target === "phone"));
  const dids = all.flatMap((s) => s.dids);
  assert.ok(dids.some((d) => d.routing_environment === "staging"));
  assert.ok(dids.some((d) => d.is_default));
  assert.ok(all.some((s) => s.trunks.some((t) => t.registration)));
  assert.ok(all.some((s) => s.outbound_routes.some((r) => r.strip_digits > 0 && r.prepend_digits)));
});

test.run();
