// Line coverage of src/ per folder, from the json-summary c8 writes (`npm run coverage`). A folder
// counts the files directly in it (src/api/routes is its own row); the lowest come first, so the
// folders to work on are at the top.
import { readFileSync } from "node:fs";
import { dirname, relative } from "node:path";

interface Totals {
  lines: { total: number; covered: number };
}

const root = new URL("..", import.meta.url).pathname;
const summary = JSON.parse(
  readFileSync(new URL("../coverage/coverage-summary.json", import.meta.url), "utf8"),
) as Record<string, Totals>;

const folders = new Map<string, { total: number; covered: number }>();
for (const [file, totals] of Object.entries(summary)) {
  if (file === "total") continue;
  const folder = dirname(relative(root, file));
  const row = folders.get(folder) ?? { total: 0, covered: 0 };
  row.total += totals.lines.total;
  row.covered += totals.lines.covered;
  folders.set(folder, row);
}

const percent = (row: { total: number; covered: number }) =>
  row.total === 0 ? 100 : (100 * row.covered) / row.total;
const rows = [...folders].sort((a, b) => percent(a[1]) - percent(b[1]));
const width = Math.max(...rows.map(([folder]) => folder.length));
console.log(`${"folder".padEnd(width)}  lines %  covered/total`);
for (const [folder, row] of rows) {
  console.log(
    `${folder.padEnd(width)}  ${percent(row).toFixed(1).padStart(7)}  ${row.covered}/${row.total}`,
  );
}
const all = summary.total?.lines;
if (all)
  console.log(
    `${"src (all)".padEnd(width)}  ${percent(all).toFixed(1).padStart(7)}  ${all.covered}/${all.total}`,
  );
