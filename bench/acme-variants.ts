// Org files shaped like orgs/acme.yaml for the GitOps benchmark: the same YAML (comments, flow
// mappings, every feature) with the values that must be unique per org replaced, so thousands of
// them validate together: org id and slug, the explicit queue id, DID numbers and trunk match
// addresses. The same index always gives the same text.
import { readFileSync } from "node:fs";

const ACME = readFileSync(new URL("../orgs/acme.yaml", import.meta.url), "utf8");

const pad = (n: number, width: number) => String(n).padStart(width, "0");
const hex = (n: number, width: number) => n.toString(16).padStart(width, "0");

/** The text of the `index`-th org file (index < 1,000,000). */
export function acmeVariant(index: number): string {
  const national = (suffix: string) => `80${pad(index, 6)}${suffix}`;
  const replacements: [string, string][] = [
    ["4f1c2a9e-8b3d-4c7a-9e21-5d6f0a1b2c3d", `${hex(index, 8)}-8b3d-4c7a-9e21-5d6f0a1b2c3d`],
    ["4148df6b-aaf0-519b-94cf-da4ba1919f53", `${hex(index, 8)}-aaf0-519b-94cf-da4ba1919f53`],
    ["name: Acme Corp", `name: Acme ${index}`],
    ["slug: acme", `slug: acme-${index}`],
    // A caller ID in the deployment's owned range, so the files carry no warning.
    ["caller_id_override: +918065978003", "caller_id_override: +918065978020"],
    ["+918065978001", `+91${national("01")}`],
    ['"08065978002"', `"0${national("02")}"`],
    ["+918065978003", `+91${national("03")}`],
    ["+918065978010", `+91${national("10")}`],
    ["+918065978011", `+91${national("11")}`],
    ["+14155550100", `+14152${pad(index, 6)}`],
    [
      "[203.0.113.10, 203.0.113.11]",
      `[10.${index >> 16}.${(index >> 8) & 255}.${index & 255}, 172.16.${(index >> 8) & 255}.${index & 255}]`,
    ],
  ];
  let text = ACME;
  for (const [from, to] of replacements) {
    if (!text.includes(from)) throw new Error(`orgs/acme.yaml no longer contains ${from}`);
    text = text.replaceAll(from, to);
  }
  return text;
}

/** The file name of the `index`-th org. */
export function acmeVariantName(index: number): string {
  return `acme-${pad(index, 5)}.yaml`;
}
