// Which store the tests run on. `npm test` runs them on SQLite; `npm run test:pg` (scripts/test.ts
// --pg) starts a throwaway PostgreSQL cluster, migrates a template database once and sets
// PBX_TEST_POSTGRES_URL: every test then gets a fresh database copied from that template
// (CREATE DATABASE ... TEMPLATE, a file copy: much faster than migrating each time).
import { randomBytes } from "node:crypto";
import pg from "pg";
import type { StoreLocation } from "../../src/config.js";

/** The migrated template database scripts/test.ts --pg creates. */
export const TEMPLATE_DATABASE = "pbx_template";
export const TEST_POSTGRES_VARIABLE = "PBX_TEST_POSTGRES_URL";

/** The cluster's `postgres` database when the run is on PostgreSQL, else null. */
export function testPostgresUrl(): string | null {
  return process.env[TEST_POSTGRES_VARIABLE] || null;
}

export function testBackend(): "sqlite" | "postgres" {
  return testPostgresUrl() ? "postgres" : "sqlite";
}

async function adminStatement(adminUrl: string, statement: string): Promise<void> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    await client.query(statement);
  } finally {
    await client.end();
  }
}

export interface TestStoreLocation {
  location: StoreLocation;
  /** Drops the database (PostgreSQL); nothing on SQLite, whose file goes with its directory. */
  drop(): Promise<void>;
}

/**
 * Where a test's fresh store lives: the SQLite file `sqliteFile`, or on a PostgreSQL run a new
 * database made from the migrated template.
 */
/** Like freshStoreLocation, but unmigrated: an empty SQLite file or an empty database. */
export async function emptyStoreLocation(sqliteFile: string): Promise<TestStoreLocation> {
  const adminUrl = testPostgresUrl();
  if (!adminUrl) return { location: { kind: "sqlite", file: sqliteFile }, drop: async () => {} };
  return newDatabase(adminUrl, "");
}

async function newDatabase(adminUrl: string, template: string): Promise<TestStoreLocation> {
  const name = `t_${process.pid}_${randomBytes(6).toString("hex")}`;
  await adminStatement(adminUrl, `CREATE DATABASE ${name}${template && ` TEMPLATE ${template}`}`);
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return {
    location: { kind: "postgres", url: url.toString(), poolSize: 5 },
    drop: () => adminStatement(adminUrl, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`),
  };
}

export async function freshStoreLocation(
  sqliteFile: string,
  options: { sqliteOnly?: boolean } = {},
): Promise<TestStoreLocation> {
  const adminUrl = testPostgresUrl();
  if (!adminUrl || options.sqliteOnly)
    return { location: { kind: "sqlite", file: sqliteFile }, drop: async () => {} };
  return newDatabase(adminUrl, TEMPLATE_DATABASE);
}
