// The edge compiler's goldens (issue 26): byte-identical output twice, equal to the fixtures.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { compileEdge, EdgeListenError, type EdgeState } from "../../src/compiler/edge/index.js";
import { compileEdgeCase, edgeTree, GOLDEN_LISTEN, listEdgeCases } from "./edge-cases.js";
import { ACCEPT_HINT, caseOutput, checkCase } from "./golden.js";

const cases = listEdgeCases();

test("the edge has golden cases: every engine case and its own", () => {
  assert.ok(cases.includes("edge/two-nodes"), "the two-node case");
  assert.ok(cases.includes("edge/hostile-input"), "the hostile-input case");
  assert.ok(cases.length >= 14, `only ${cases.length} cases`);
});

for (const name of cases) {
  test(`golden edge: ${name}`, () => {
    const first = caseOutput(compileEdgeCase(name));
    assert.equal([...caseOutput(compileEdgeCase(name))], [...first], "must be deterministic");
    const problems = checkCase(name, first, edgeTree(name));
    if (problems.length > 0) {
      assert.unreachable(`${problems.join("\n")}\n${ACCEPT_HINT}`);
    }
  });
}

function edgeState(overrides: Partial<EdgeState>): EdgeState {
  return {
    listen: GOLDEN_LISTEN,
    nodes: [{ name: "node-1", sip_address: "127.0.0.11", state: "active" }],
    orgs: [],
    carriers: [],
    ...overrides,
  };
}

test("a hostile context prefix or DID never reaches a file", () => {
  const evil = 'org_x_:1:0:0:9:0\n2:"a";loadmodule "exec.so"_';
  const result = compileEdge(
    edgeState({
      orgs: [
        { org_id: "o1", context_prefix: evil, primary: "node-1", standby: null, dids: [] },
        {
          org_id: "o2",
          context_prefix: "org_b_",
          primary: "node-1",
          standby: null,
          dids: ["+918065978011", "1:org_x_\nexec", "$(hdr(X-Evil))"],
        },
      ],
    }),
  );
  const text = result.files.map((file) => file.content).join("\n");
  assert.not.match(text, "exec");
  assert.not.match(text, "X-Evil");
  assert.match(text, "1:+918065978011:0:0:org_b_:0");
  assert.equal(
    result.diagnostics.map((d) => d.message),
    [
      "org o1: context prefix is not a unique context prefix",
      "org o2: DID is not a number",
      "org o2: DID is not a number",
    ],
  );
});

test("listen settings that cannot be printed safely are refused", () => {
  const bad: Array<[Partial<EdgeState["listen"]>, string]> = [
    [{ sip_address: "edge.example" }, "edge SIP address edge.example is not an IP address"],
    [{ sip_port: 0 }, "edge SIP port must be 1-65535"],
    [{ rpc_port: 5060 }, "edge RPC port must differ from its SIP port"],
    [
      { data_dir: '/etc/k"\nloadmodule' },
      'edge data directory /etc/k"\nloadmodule must be an absolute path of letters, digits, ., _, - and /',
    ],
    [
      { data_dir: "relative/dir" },
      "edge data directory relative/dir must be an absolute path of letters, digits, ., _, - and /",
    ],
    [{ probe_interval: 0 }, "edge probe interval must be a whole number of seconds, at least 1"],
  ];
  for (const [listen, message] of bad) {
    assert.throws(
      () => compileEdge(edgeState({ listen: { ...GOLDEN_LISTEN, ...listen } })),
      (error: unknown) => error instanceof EdgeListenError && error.message === message,
      message,
    );
  }
});

test.run();
