// Golden cases of the call-flow picture: fixtures/graph/<case>/input.yaml gives exactly
// expected.mmd (Mermaid) and expected.dot (Graphviz DOT); the SVG Graphviz renders from the DOT
// parses as XML and names every node. UPDATE_GOLDEN=1 rewrites the text goldens.
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { XMLParser, XMLValidator } from "fast-xml-parser";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { buildCallGraph, toDot, toMermaid } from "../../src/compiler/call-graph.js";
import { callFlowSvg } from "../../src/domain/routing/call-flow.js";
import { loadOrgSources } from "../../src/model/files.js";
import type { OrgState } from "../../src/model/org-state.js";
import { expectGoldenText, FIXTURES } from "./golden.js";

const DIR = join(FIXTURES, "graph");
const cases = readdirSync(DIR).filter((name) => existsSync(join(DIR, name, "input.yaml")));

function load(name: string): OrgState {
  const file = join(DIR, name, "input.yaml");
  const loaded = loadOrgSources([{ file, text: readFileSync(file, "utf8") }], {});
  assert.equal(
    loaded.diagnostics.filter((d) => d.severity === "error"),
    [],
    file,
  );
  return loaded.orgs[0]!.state;
}

for (const name of cases) {
  test(`graph golden: ${name} (mermaid and dot)`, () => {
    const graph = buildCallGraph(load(name));
    expectGoldenText(join(DIR, name, "expected.mmd"), toMermaid(graph));
    expectGoldenText(join(DIR, name, "expected.dot"), toDot(graph));
  });

  test(`graph: ${name} renders to SVG that parses as XML and names every node`, async () => {
    const state = load(name);
    const svg = await callFlowSvg(state);
    assert.is(XMLValidator.validate(svg), true);
    const doc = new XMLParser({ ignoreAttributes: false }).parse(svg);
    assert.ok(doc.svg, "the root element is <svg>");
    const titles = [...svg.matchAll(/<title>([^<]*)<\/title>/g)].map((m) => m[1]);
    for (const node of buildCallGraph(state).nodes) {
      assert.ok(titles.includes(node.id), `node ${node.id} is drawn`);
    }
  });
}

test.run();
