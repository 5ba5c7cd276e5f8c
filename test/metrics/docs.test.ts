// docs/metrics.md is the registry's own description: every pbx_* metric with its type, labels and
// help; every alert of docs/alerts.yaml has its runbook line, and promtool accepts the rules and
// passes their unit tests.
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { parse } from "yaml";
import { createMetrics } from "../../src/metrics/registry.js";

const root = new URL("../../", import.meta.url).pathname;
const doc = readFileSync(`${root}docs/metrics.md`, "utf8");
const rulesFile = `${root}docs/alerts.yaml`;

interface Documented {
  type: string;
  labels: string[];
  help: string;
}

function documentedMetrics(): Map<string, Documented> {
  const rows = new Map<string, Documented>();
  for (const match of doc.matchAll(/^\| `(pbx_[a-z_]+)` \| (\w+) \|([^|]*)\| (.+) \|$/gm)) {
    const labels = [...match[3]!.matchAll(/`([a-z_]+)`/g)].map((m) => m[1]!);
    rows.set(match[1]!, { type: match[2]!, labels, help: match[4]! });
  }
  return rows;
}

test("every pbx_* metric is documented with its type, labels and help, and nothing else is", async () => {
  const metrics = createMetrics();
  const documented = documentedMetrics();
  const registered = (await metrics.registry.getMetricsAsJSON()).filter((m) =>
    m.name.startsWith("pbx_"),
  );
  assert.ok(registered.length > 20);
  for (const metric of registered) {
    const row = documented.get(metric.name);
    assert.ok(row, `${metric.name} is not in docs/metrics.md`);
    const labelNames =
      (metrics.registry.getSingleMetric(metric.name) as unknown as { labelNames?: string[] })
        .labelNames ?? [];
    assert.equal(row, { type: metric.type, labels: labelNames, help: metric.help }, metric.name);
  }
  assert.equal(
    [...documented.keys()].sort(),
    registered.map((m) => m.name).sort(),
    "docs/metrics.md documents a metric the registry does not have",
  );
});

test("every alert has a runbook line in docs/metrics.md", () => {
  const rules = parse(readFileSync(rulesFile, "utf8")) as {
    groups: { rules: { alert: string; annotations: { runbook: string } }[] }[];
  };
  const alerts = rules.groups.flatMap((group) => group.rules);
  assert.ok(alerts.length >= 6);
  for (const { alert, annotations } of alerts) {
    const anchor = alert.toLowerCase();
    assert.is(annotations.runbook, `docs/metrics.md#${anchor}`);
    assert.match(doc, `| <a id="${anchor}"></a>\`${alert}\` |`);
  }
});

test("promtool check rules accepts docs/alerts.yaml", () => {
  const run = spawnSync("promtool", ["check", "rules", rulesFile], { encoding: "utf8" });
  if ((run.error as NodeJS.ErrnoException | undefined)?.code === "ENOENT") {
    console.warn(
      "\n!!! promtool not installed: `promtool check rules docs/alerts.yaml` NOT run " +
        "(apt-get install prometheus; CI installs it and runs it in .ci/run) !!!\n",
    );
    return;
  }
  assert.is(run.status, 0, `${run.stdout}${run.stderr}`);
});

test("promtool test rules: the alerts fire on what they say (test/metrics/alerts.promtool.yaml)", () => {
  const cases = `${root}test/metrics/alerts.promtool.yaml`;
  const run = spawnSync("promtool", ["test", "rules", cases], { encoding: "utf8" });
  if ((run.error as NodeJS.ErrnoException | undefined)?.code === "ENOENT") {
    console.warn(
      "\n!!! promtool not installed: `promtool test rules test/metrics/alerts.promtool.yaml` NOT " +
        "run (apt-get install prometheus; CI installs it and runs it in .ci/run) !!!\n",
    );
    return;
  }
  assert.is(run.status, 0, `${run.stdout}${run.stderr}`);
});

test.run();
