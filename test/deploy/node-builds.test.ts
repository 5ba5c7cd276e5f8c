// Per-node file sets (issue 25 step 3, first part): a node's builds hold only the orgs placed on
// it, its top-level includes name only them, its gateway dispatches only their DIDs; an org
// pinned elsewhere leaves the node at its next deploy. Two fake AMI engines (recorded answers
// only), each with its own engine directory; every file of each tree is read back to prove that
// no other org's config is there ("placement is tenant isolation too").
import { test } from "uvu";
import * as assert from "uvu/assert";
import { StoreBuilds } from "../../src/deploy/store-builds.js";
import { StoreDeploys } from "../../src/deploy/store-deploys.js";
import { createEngineNode } from "../../src/domain/nodes/engine-nodes.js";
import { pinOrg } from "../../src/domain/nodes/placement.js";
import { addToPool, assignFromPool, seedUser } from "../api/dids-fixtures.js";
import { startTestApp } from "../api/helpers.js";
import { rig, tree } from "./helpers.js";

const GATEWAY = { environment: "prod", staging_endpoint: "staging-tunnel" } as const;

/** Paths of `files` that mention `needle`, in name or content. */
function mentioning(files: Map<string, string>, needle: string): string[] {
  return [...files]
    .filter(([path, text]) => path.includes(needle) || text.includes(needle))
    .map(([p]) => p);
}

test("each node's tree holds only its orgs; a pinned org moves at the next deploys", async () => {
  const app = await startTestApp();
  const one = await rig();
  const two = await rig();
  try {
    const deps = { db: app.db, config: app.config, clock: () => app.clock.now };
    const n1 = await createEngineNode(deps, {
      name: "node-1",
      ami_username: "pbxctl",
      ami_secret: "secret",
      sip_address: "10.0.0.11",
      capacity: 5,
    });
    const n2 = await createEngineNode(deps, {
      name: "node-2",
      ami_username: "pbxctl",
      ami_secret: "secret",
      sip_address: "10.0.0.12",
      capacity: 5,
    });
    const a = await app.createOrg("A"); // node-1 (tie, by name)
    const b = await app.createOrg("B"); // node-2 (node-1 holds more)
    for (const [org, number] of [
      [a, "+918065978001"],
      [b, "+918065978002"],
    ] as const) {
      await seedUser(app, org.id, "2001");
      await assignFromPool(app, org, (await addToPool(app, number)).id);
    }
    const nodes = [
      { node: n1, rig: one, own: a, other: b, did: "918065978001", otherDid: "918065978002" },
      { node: n2, rig: two, own: b, other: a, did: "918065978002", otherDid: "918065978001" },
    ];
    const deploys = nodes.map(
      ({ node, rig }) =>
        new StoreDeploys({
          builds: new StoreBuilds({ db: app.db, gateway: GATEWAY, nodeId: node.id }),
          deployer: rig.deployer,
        }),
    );
    for (const d of deploys) {
      const summary = await d.deployEverything("startup");
      assert.is(summary.failed.length, 0, JSON.stringify(summary.failed));
    }
    for (const { rig, own, other, did, otherDid } of nodes) {
      const files = tree(rig.dir);
      assert.ok(mentioning(files, own.id).length > 0, "the node holds its own org");
      assert.equal(mentioning(files, other.id), [], "and nothing of the other org");
      const gateway = [...files]
        .filter(([p]) => p.startsWith("gateway"))
        .map(([, t]) => t)
        .join("");
      assert.match(gateway, did);
      assert.not.match(gateway, otherDid, "a DID is dispatched only where its org lives");
      assert.ok(rig.ami.reloadCommands().length > 0, "each node reloads its own engine");
    }

    // Pin A to node-2: node-1 removes it, node-2 adds it, at each node's next deploy of A.
    await pinOrg(app.db, a.id, { node: "node-2" }, app.clock.now.toISOString());
    const reloadsBefore = one.ami.reloadCommands().length;
    for (const d of deploys) await d.deployOrgNow(a.id).catch(() => {});
    await Promise.all(deploys.map((d) => d.regenerateGateway("move")));
    const after1 = tree(one.dir);
    const after2 = tree(two.dir);
    assert.equal(mentioning(after1, a.id), [], "node-1 no longer holds A");
    assert.ok(mentioning(after2, a.id).length > 0, "node-2 holds A");
    assert.ok(mentioning(after2, b.id).length > 0, "and still B");
    assert.not.match(
      [...after1]
        .filter(([p]) => p.startsWith("gateway"))
        .map(([, t]) => t)
        .join(""),
      "918065978001",
    );
    assert.ok(one.ami.reloadCommands().length > reloadsBefore, "node-1 reloaded without A");
    for (const d of deploys) await d.stop({ flush: false });
  } finally {
    await one.close();
    await two.close();
    await app.close();
  }
});

test("without a node the builds are every org's, as before nodes existed", async () => {
  const app = await startTestApp();
  try {
    const a = await app.createOrg("A");
    const b = await app.createOrg("B");
    const builds = new StoreBuilds({ db: app.db, gateway: GATEWAY });
    assert.equal((await builds.orgs()).map((o) => o.id).sort(), [a.id, b.id].sort());
    const top = (await builds.topLevelFiles()).map((f) => f.content).join("");
    assert.match(top, `org_${a.id}_`);
    assert.match(top, `org_${b.id}_`);
  } finally {
    await app.close();
  }
});

test.run();
