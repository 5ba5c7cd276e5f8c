// Issue 19: every org has a slug. Orgs created before slugs were made from names (through the API
// they had none and could not get one) get one now: their name's slug, -2, -3, ... when taken,
// oldest org first. Self-contained (no domain import): a migration must not change when today's
// code does.
import { type Kysely, sql } from "kysely";

const MAX_LENGTH = 63;

function slugFromName(name: string): string {
  const slug = name
    .normalize("NFKD")
    .replace(/[\u0300-\u036f]/g, "")
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "")
    .slice(0, MAX_LENGTH)
    .replace(/-+$/, "");
  return /^[a-z0-9][a-z0-9-]{0,62}$/.test(slug) ? slug : "org";
}

export async function up(db: Kysely<unknown>): Promise<void> {
  const { rows } = await sql<{ id: string; name: string; slug: string | null }>`
    select id, name, slug from organizations order by created_at, id`.execute(db);
  const used = new Set(rows.flatMap((row) => (row.slug ? [row.slug] : [])));
  for (const row of rows) {
    if (row.slug) continue;
    const base = slugFromName(row.name);
    let slug = base;
    for (let n = 2; used.has(slug); n++) {
      const suffix = `-${n}`;
      slug = `${base.slice(0, MAX_LENGTH - suffix.length).replace(/-+$/, "")}${suffix}`;
    }
    used.add(slug);
    await sql`update organizations set slug = ${slug} where id = ${row.id}`.execute(db);
  }
}

/** Slugs given here are not told apart from slugs set later: they stay. */
export async function down(): Promise<void> {}
