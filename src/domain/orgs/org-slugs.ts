// An org's slug: the short, unique, human name of an org in file names (`pbxctl export` writes
// `<slug>.yaml`), `--org <slug>` and trunk password variables. Settable through the API; when it
// is not given, it is made from the org's name ("Acme Trading Co." -> acme-trading-co), with
// -2, -3, ... when another org holds it already.
import { Slug } from "../../model/org-state.js";
import type { Db } from "../../store/database.js";
import { createOrganizationRepository } from "../../store/organization-repository.js";
import { Conflict } from "../errors.js";

const SLUG = new RegExp(Slug.pattern ?? "");
const MAX_LENGTH = 63;

/** The slug a name suggests (lowercase ASCII letters and digits joined by -), or `org`. */
export function slugFromName(name: string): string {
  const words = name
    .normalize("NFKD")
    .replace(/[\u0300-\u036f]/g, "") // accents off: "Café" -> "cafe"
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "");
  const slug = words.slice(0, MAX_LENGTH).replace(/-+$/, "");
  return SLUG.test(slug) ? slug : "org";
}

/** Ids holding each of `slugs` (other than `exceptId`). */
async function taken(
  db: Db,
  candidates: readonly string[],
  exceptId: string | null,
): Promise<Set<string>> {
  return createOrganizationRepository(db).slugsTaken(candidates, exceptId);
}

/** `base`, else the first of `base-2`, `base-3`, ... no other org holds. */
export async function freeSlug(
  db: Db,
  base: string,
  exceptId: string | null = null,
): Promise<string> {
  for (let start = 1; ; start += 50) {
    const candidates = Array.from({ length: 50 }, (_, i) => {
      const n = start + i;
      if (n === 1) return base;
      const suffix = `-${n}`;
      return `${base.slice(0, MAX_LENGTH - suffix.length).replace(/-+$/, "")}${suffix}`;
    });
    const used = await taken(db, candidates, exceptId);
    const free = candidates.find((candidate) => !used.has(candidate));
    if (free) return free;
  }
}

/** Refuses a slug another org holds (409); the unique index is the last word under a race. */
export async function assertSlugFree(db: Db, slug: string, orgId: string | null): Promise<void> {
  if ((await taken(db, [slug], orgId)).size > 0) {
    throw new Conflict(`Slug ${slug} is already used by another organization`);
  }
}
