// Rows -> OrgState: valid against the shared schema, deterministic, and the extension register.
import { randomUUID } from "node:crypto";
import { Ajv } from "ajv";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { GatewayStateSchema, OrgStateSchema } from "../../src/model/org-state.js";
import { createDidRepository } from "../../src/store/did-repository.js";
import { createExtensionClaimRepository } from "../../src/store/extension-claim-repository.js";
import { createIvrRepository } from "../../src/store/ivr-repository.js";
import { loadGatewayState } from "../../src/store/load-gateway-state.js";
import { loadOrgState } from "../../src/store/load-org-state.js";
import { createOutboundRouteRepository } from "../../src/store/outbound-route-repository.js";
import { createQueueRepository } from "../../src/store/queue-repository.js";
import { createTrunkRepository } from "../../src/store/trunk-repository.js";
import { createUserRepository } from "../../src/store/user-repository.js";
import { freshStore, insertOrg } from "./helpers.js";

const validate = new Ajv({ strict: false, allErrors: true }).compile(OrgStateSchema);

const user = (extension: string, name: string) => ({
  extension,
  name,
  routing_type: "human" as const,
  status: "active" as const,
  ring_target: "ext" as const,
  phone_number: null,
  ring_time: 30,
  outbound_did: null,
  call_recording: true,
});

test("a state loaded from rows passes OrgStateSchema and keeps every field", async () => {
  const store = await freshStore();
  const orgId = randomUUID();
  try {
    await insertOrg(store.db, orgId);
    await insertOrg(store.db, randomUUID(), "Other org");
    await store.db.transaction().execute(async (trx) => {
      const users = createUserRepository(trx);
      // Inserted out of order on purpose: the loader sorts.
      await users.insert(orgId, {
        ...user("1002", "Bob"),
        ring_target: "phone",
        phone_number: "+919876543210",
      });
      await users.insert(orgId, {
        ...user("1001", "Alice"),
        sip: { md5_cred: "0123456789abcdef0123456789abcdef" },
      });
      await createQueueRepository(trx).insert(orgId, {
        number: "600",
        name: "Support",
        strategy: "rrmemory",
        moh: "default",
        max_wait: 120,
        timeout_destination_type: "phone",
        timeout_destination: "+919876543210",
        members: [
          { extension: "1002", penalty: 1, ring_time: 15 },
          { extension: "1001", penalty: 0, ring_time: 20 },
        ],
      });
      await createIvrRepository(trx).insert(orgId, {
        name: "Main",
        extension: "700",
        description: "",
        timeout: 0,
        max_retries: 3,
        status: "active",
        greeting_language: "en-IN",
        greeting_voice: "en-IN-Wavenet-D",
        greeting_prompt: null,
        direct_extension_dial: true,
        options: [
          { digit: "1", action_type: "queue", action_destination: "600", description: "support" },
          { digit: "#", action_type: "hangup", action_destination: null, description: "" },
        ],
      });
      const dids = createDidRepository(trx);
      await dids.insert(orgId, {
        number: "+918065978010",
        status: "active",
        pool_status: "assigned",
        is_default: true,
        routing_type: "ivr",
        routing_destination: "700",
        routing_environment: "staging",
      });
      await dids.insert(null, {
        number: "+918065978011",
        status: "active",
        pool_status: "available",
        is_default: false,
        routing_type: null,
        routing_destination: null,
        routing_environment: "prod",
      });
      await createTrunkRepository(trx).insert(orgId, {
        name: "carrier",
        host: "sip.carrier.example",
        port: 5061,
        transport: "tls",
        username: "acme",
        password_env: "CARRIER_PASSWORD",
        registration: true,
        codecs: ["alaw"],
        match: ["192.0.2.10"],
      });
      await createOutboundRouteRepository(trx).insert(orgId, {
        name: "India",
        patterns: ["_0X.", "_91X."],
        trunk: "carrier",
        strip_digits: 1,
        prepend_digits: "91",
        caller_id_override: null,
      });
    });

    const state = await loadOrgState(store.db, orgId);
    assert.ok(validate(state), JSON.stringify(validate.errors));
    assert.equal(
      state.users.map((u) => u.extension),
      ["1001", "1002"],
    );
    assert.equal(state.users[0]?.sip, { md5_cred: "0123456789abcdef0123456789abcdef" });
    assert.is(state.users[1]?.ring_target, "phone");
    assert.equal(
      state.queues[0]?.members.map((m) => m.extension),
      ["1002", "1001"],
    );
    assert.equal(
      state.ivrs[0]?.options.map((o) => o.digit),
      ["1", "#"],
    );
    assert.is(state.ivrs[0]?.timeout, 0);
    assert.is(state.ivrs[0]?.direct_extension_dial, true);
    assert.equal(
      state.dids.map((d) => d.number),
      ["+918065978010"],
      "pool numbers belong to no org",
    );
    assert.is(state.dids[0]?.routing_environment, "staging");
    assert.equal(state.trunks[0]?.codecs, ["alaw"]);
    assert.is(state.trunks[0]?.password_env, "CARRIER_PASSWORD");
    assert.equal(state.outbound_routes[0]?.patterns, ["_0X.", "_91X."]);
    assert.is(state.outbound_routes[0]?.trunk, "carrier");
    assert.equal(state.org.settings, { recording_enabled: true, max_concurrent_calls: 0 });
    assert.equal(await loadOrgState(store.db, orgId), state, "same rows, same state");

    const gateway = await loadGatewayState(store.db, {
      environment: "prod",
      staging_endpoint: "staging-tunnel",
    });
    assert.ok(new Ajv({ strict: false }).validate(GatewayStateSchema, gateway));
    assert.equal(gateway.orgs, [
      {
        org_id: orgId,
        context_prefix: `org_${orgId}_`,
        dids: [{ number: "+918065978010", routing_environment: "staging" }],
      },
    ]);
  } finally {
    await store.close();
  }
});

test("an org with no configuration loads as a valid empty state", async () => {
  const store = await freshStore();
  const orgId = randomUUID();
  try {
    await insertOrg(store.db, orgId);
    const state = await loadOrgState(store.db, orgId);
    assert.ok(validate(state), JSON.stringify(validate.errors));
    assert.equal(state.users, []);
  } finally {
    await store.close();
  }
});

test("extension claims: one owner per number per org; concurrent claims, exactly one wins", async () => {
  const store = await freshStore();
  const orgId = randomUUID();
  const otherOrg = randomUUID();
  try {
    await insertOrg(store.db, orgId);
    await insertOrg(store.db, otherOrg, "Other");
    const ivr = await createIvrRepository(store.db).insert(orgId, {
      name: "Main",
      extension: "700",
      description: "",
      timeout: 10,
      max_retries: 3,
      status: "active",
      greeting_language: "en-IN",
      greeting_voice: "en-IN-Wavenet-D",
      greeting_prompt: null,
      direct_extension_dial: false,
      options: [],
    });
    const claims = createExtensionClaimRepository(store.db);
    const results = await Promise.all(
      [ivr.id, randomUUID(), randomUUID(), randomUUID(), randomUUID()].map((id) =>
        store.db
          .transaction()
          .execute((trx) =>
            createExtensionClaimRepository(trx).claim(orgId, "700", { type: "ivr", id }),
          ),
      ),
    );
    assert.is(results.filter((r) => r.claimed).length, 1);
    const holder = await claims.holderOf(orgId, "700");
    const refused = results.find((r) => !r.claimed);
    if (holder?.id === ivr.id)
      assert.equal(refused, { claimed: false, holder: { type: "ivr", id: ivr.id, name: "Main" } });
    // Another org may use the same number.
    assert.equal(await claims.claim(otherOrg, "700", { type: "user", id: randomUUID() }), {
      claimed: true,
    });
    // Release frees it for someone else.
    await claims.release(orgId, "700", { type: holder!.type, id: holder!.id });
    assert.equal(await claims.claim(orgId, "700", { type: "queue", id: randomUUID() }), {
      claimed: true,
    });
  } finally {
    await store.close();
  }
});

test.run();
