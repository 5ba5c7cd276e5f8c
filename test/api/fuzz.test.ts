// A schema-driven fuzzer over the published OpenAPI document: every operation gets the same
// fixed list of hostile requests (wrong types, huge and non-finite numbers, control characters,
// lone surrogates, bad Content-Encodings and Content-Types, invalid UTF-8, oversized and deeply
// nested bodies, odd path and query values, missing or forged credentials). The run is bounded by
// that list, not by time, and seeded, so a failure replays exactly. Every answer must be below 500
// and keep the document's word (a listed status, a body of its schema).
import { request } from "node:http";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { allRoutes } from "../../src/api/routes/index.js";
import { createServerEngine, type ServerEngine } from "../../src/deploy/store-engine.js";
import { createContract } from "./contract.js";
import { INTERNAL_KEY, startTestApp, type TestApp } from "./helpers.js";
import { fakeSpeechEngine } from "./ivrs-helpers.js";

type Json = Record<string, unknown>;

/** mulberry32: a small seeded generator, so every run sends the same requests. */
function seeded(seed: number) {
  let state = seed >>> 0;
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return {
    pick: <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)] as T,
    chance: (p: number) => next() < p,
  };
}

const SEED = 13;
const random = seeded(SEED);

// Raw JSON tokens that JSON.stringify cannot write: placeholders are swapped in after encoding.
const RAW = {
  huge: "1e400",
  hugeNegative: "-1e400",
  longInteger: "123456789012345678901234567890",
  tiny: "1e-400",
  nan: "NaN",
  infinity: "Infinity",
  loneSurrogate: '"a\\ud800b"',
  lowSurrogate: '"\\udfff"',
} as const;
const placeholder = (name: keyof typeof RAW) => `@@RAW_${name}@@`;
const withRaw = (text: string) =>
  text.replace(/"@@RAW_(\w+)@@"/g, (_, name: keyof typeof RAW) => RAW[name]);

const HOSTILE_STRINGS = [
  "",
  "\u0000",
  "a\nexten => _X.,1,System(id)",
  "x\r\n[evil]",
  "${SHELL}",
  "\u007f\u0085\u2028",
  ";comment",
  "a".repeat(5000),
  "😀",
  "%00%ff",
];

interface Fixture {
  app: TestApp;
  orgId: string;
  orgKey: string;
  admin: string;
  ids: string[];
}

/** A value for `schema`, mostly valid-looking (the mutations below make it hostile). */
function sample(schema: Json | undefined, components: Json, fx: Fixture, depth = 0): unknown {
  if (!schema || depth > 4) return null;
  if (typeof schema.$ref === "string") {
    return sample(components[schema.$ref.split("/").pop()!] as Json, components, fx, depth);
  }
  if (Array.isArray(schema.enum)) return random.pick(schema.enum);
  const branches = (schema.anyOf ?? schema.oneOf) as Json[] | undefined;
  if (branches) return sample(random.pick(branches), components, fx, depth);
  switch (schema.type) {
    case "string":
      if (schema.format === "uuid") return random.pick([...fx.ids, fx.orgId]);
      if (schema.format === "uri") return "https://example.test/hook";
      return random.pick(["100", "Acme", "+918065978001", "en-IN", "welcome", "1"]);
    case "integer":
    case "number":
      return random.pick([0, 1, 5, schema.minimum ?? 0, schema.maximum ?? 10]);
    case "boolean":
      return random.chance(0.5);
    case "array":
      return random.chance(0.5) ? [] : [sample(schema.items as Json, components, fx, depth + 1)];
    default: {
      const properties = (schema.properties ?? {}) as Record<string, Json>;
      const required = new Set((schema.required as string[] | undefined) ?? []);
      const out: Json = {};
      for (const [name, sub] of Object.entries(properties)) {
        if (required.has(name) || random.chance(0.5)) {
          out[name] = sample(sub, components, fx, depth + 1);
        }
      }
      return out;
    }
  }
}

/** `body` with one field (or the body itself) replaced by `value`. */
function replaceOneField(body: unknown, value: unknown): unknown {
  if (typeof body !== "object" || body === null || Array.isArray(body)) return value;
  const keys = Object.keys(body);
  const key = keys.length > 0 ? random.pick(keys) : "extra";
  return { ...body, [key]: value };
}

interface FuzzRequest {
  kind: string;
  headers: Record<string, string>;
  body?: string | Uint8Array;
  query?: string;
  path?: (path: string) => string;
}

function nested(depth: number): string {
  return `${"[".repeat(depth)}${"]".repeat(depth)}`;
}

/** The fixed list of hostile variants of one request whose valid-looking body is `body`. */
function variants(body: unknown, takesBody: boolean): FuzzRequest[] {
  const json = { "content-type": "application/json" };
  const field = (value: unknown) => withRaw(JSON.stringify(replaceOneField(body, value)));
  const list: FuzzRequest[] = [
    { kind: "sample", headers: json, body: JSON.stringify(body ?? {}) },
    { kind: "no credentials", headers: { ...json, "x-api-key": "" }, body: "{}" },
    { kind: "forged org key", headers: { ...json, "x-api-key": "org_forged" }, body: "{}" },
    { kind: "forged bearer", headers: { ...json, authorization: "Bearer a.b.c" }, body: "{}" },
    { kind: "query garbage", headers: json, query: "limit=1e400&offset=-1&org_id=%ff&x=\u0000" },
    { kind: "query huge", headers: json, query: `limit=${RAW.longInteger}&offset=NaN` },
    {
      kind: "path uppercase",
      headers: json,
      path: (p) => p.toUpperCase().replace("/API/V1", "/api/v1"),
    },
    {
      kind: "path garbage",
      headers: json,
      path: (p) => p.replace(/[0-9a-f-]{36}|\/100$/i, "%ff%00..%2F"),
    },
  ];
  if (!takesBody) {
    // A GET has no body semantics, but a client (or an attacker) may send one: the server ignores
    // it and its encoding and type, so none of these may answer what the GET does not document
    // (issue 28 item 6: an unknown Content-Encoding answered an undocumented 415).
    list.push(
      {
        kind: "GET body, unknown encoding",
        headers: { ...json, "content-encoding": "br2" },
        body: "{}",
      },
      {
        kind: "GET body, gzip header, plain body",
        headers: { ...json, "content-encoding": "gzip" },
        body: "{}",
      },
      {
        kind: "GET body, two encodings",
        headers: { ...json, "content-encoding": "identity, gzip" },
        body: "{}",
      },
      { kind: "GET body, xml", headers: { "content-type": "application/xml" }, body: "<a>1</a>" },
      { kind: "GET body, too large", headers: json, body: `{"a":"${"x".repeat(1_100_000)}"}` },
    );
    return list;
  }
  list.push(
    { kind: "wrong type: array", headers: json, body: field([1, "2", null]) },
    { kind: "wrong type: object", headers: json, body: field({ nested: { deeper: true } }) },
    { kind: "wrong type: number", headers: json, body: field(42.5) },
    { kind: "huge number", headers: json, body: field(placeholder("huge")) },
    { kind: "huge negative", headers: json, body: field(placeholder("hugeNegative")) },
    { kind: "long integer", headers: json, body: field(placeholder("longInteger")) },
    { kind: "tiny number", headers: json, body: field(placeholder("tiny")) },
    { kind: "NaN (not JSON)", headers: json, body: field(placeholder("nan")) },
    { kind: "Infinity (not JSON)", headers: json, body: field(placeholder("infinity")) },
    { kind: "MAX_VALUE", headers: json, body: field(Number.MAX_VALUE) },
    {
      kind: "control characters",
      headers: json,
      body: field(random.pick(HOSTILE_STRINGS.slice(1, 6))),
    },
    { kind: "lone surrogate", headers: json, body: field(placeholder("loneSurrogate")) },
    { kind: "low surrogate", headers: json, body: field(placeholder("lowSurrogate")) },
    { kind: "long string", headers: json, body: field("x".repeat(100_000)) },
    { kind: "body too large", headers: json, body: `{"a":"${"x".repeat(1_100_000)}"}` },
    { kind: "deep nesting", headers: json, body: nested(50_000) },
    { kind: "not an object", headers: json, body: random.pick(["[]", '"x"', "3", "null", "true"]) },
    { kind: "malformed JSON", headers: json, body: '{"a":' },
    {
      kind: "gzip header, plain body",
      headers: { ...json, "content-encoding": "gzip" },
      body: "{}",
    },
    {
      kind: "deflate garbage",
      headers: { ...json, "content-encoding": "deflate" },
      body: "\u0001\u0002garbage",
    },
    { kind: "unknown encoding", headers: { ...json, "content-encoding": "br2" }, body: "{}" },
    {
      kind: "two encodings",
      headers: { ...json, "content-encoding": "identity, gzip" },
      body: "{}",
    },
    {
      kind: "invalid UTF-8",
      headers: json,
      body: Uint8Array.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0xc3, 0x22, 0x7d]),
    },
    {
      kind: "charset utf-16",
      headers: { "content-type": "application/json; charset=utf-16" },
      body: "{}",
    },
    {
      kind: "charset unknown",
      headers: { "content-type": "application/json; charset=klingon" },
      body: "{}",
    },
    {
      kind: "text/plain",
      headers: { "content-type": "text/plain" },
      body: JSON.stringify(body ?? {}),
    },
    {
      kind: "form",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: "a=1&b=%ff",
    },
    { kind: "xml", headers: { "content-type": "application/xml" }, body: "<a>1</a>" },
    {
      kind: "multipart",
      headers: { "content-type": "multipart/form-data; boundary=x" },
      body: "--x--",
    },
    { kind: "no content type", headers: {}, body: "{}" },
    { kind: "wav without WAV", headers: { "content-type": "audio/wav" }, body: "RIFF....WAVEjunk" },
  );
  return list;
}

let fx: Fixture;
let engine: ServerEngine;
test.before(async () => {
  // A fully configured server (engine deploys, identity provider), so no answer is a 503
  // "not configured": the fuzzer looks for the server's faults, not missing settings.
  const app = await startTestApp({
    identityVerifier: {
      verify: async () => {
        throw new Error("token does not verify");
      },
    },
  });
  engine = createServerEngine({
    env: { PBX_ENGINE: "none" },
    dataDir: app.config.dataDir,
    db: app.db,
  });
  app.pbx.deps.configDeploys = engine.deploys;
  app.pbx.deps.speechEngine = fakeSpeechEngine();
  const org = await app.createOrg("Fuzz");
  const key = { "x-api-key": org.api_key };
  const ids: string[] = [];
  const made = async (path: string, body: unknown) => {
    const res = await app.request("POST", `/api/v1${path}`, { headers: key, body });
    assert.is(res.status, 201, `${path}: ${res.text}`);
    ids.push(res.body.id);
  };
  await made("/users", { extension: "100", name: "Ann" });
  await made("/queues", { number: "600", name: "Sales", members: [{ extension: "100" }] });
  await made("/ivrs", { name: "Main", extension: "500" });
  await made("/trunks", { name: "carrier", host: "sip.carrier.example" });
  fx = { app, orgId: org.id, orgKey: org.api_key, admin: await app.adminToken(), ids };
});
test.after(async () => {
  await engine.close({ flush: false });
  await fx.app.close();
});

/**
 * One request over node:http: fetch refuses a body on GET, and the fuzzer must send one. The
 * body, when given, goes with its length (no chunking) as most clients send it.
 */
function send(
  url: string,
  method: string,
  headers: Record<string, string>,
  body: string | Uint8Array | undefined,
): Promise<{ status: number; contentType: string; text: string }> {
  const bytes = body === undefined ? undefined : Buffer.from(body);
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      {
        method,
        headers: { ...headers, ...(bytes ? { "content-length": String(bytes.length) } : {}) },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (chunk: Buffer) => chunks.push(chunk));
        res.on("end", () =>
          resolve({
            status: res.statusCode ?? 0,
            contentType: res.headers["content-type"] ?? "",
            text: Buffer.concat(chunks).toString("utf8"),
          }),
        );
        res.on("error", reject);
      },
    );
    req.on("error", reject);
    req.end(bytes);
  });
}

/** Credentials the operation takes, so the request reaches validation and the handler. */
function credentials(route: (typeof allRoutes)[number]): Record<string, string> {
  const kinds = route.authKinds;
  if (kinds.includes("org")) return { "x-api-key": fx.orgKey };
  if (kinds.includes("admin")) return { authorization: `Bearer ${fx.admin}` };
  if (kinds.includes("internal")) return { "x-internal-key": INTERNAL_KEY };
  return {};
}

test("every operation, every hostile variant: no 5xx, no undocumented status or body", async () => {
  const document = fx.app.pbx.document;
  const components = (document.components as Json).schemas as Json;
  const check = createContract(document, allRoutes);
  // Operations that take the fixture's credentials away run last.
  const destructive = (path: string) => /regenerate-secret|\/revoke|\{orgId\}/.test(path);
  const routes = [...allRoutes].sort(
    (a, b) =>
      Number(a.method === "delete" || destructive(a.path)) -
      Number(b.method === "delete" || destructive(b.path)),
  );
  const failures: string[] = [];
  const statuses = new Map<number, number>();
  let sent = 0;
  for (const route of routes) {
    const documented = route.aliasOf ?? route.path;
    const op = ((document.paths as Json)[documented] as Json)[route.method] as Json;
    const bodySchema = (op.requestBody as Json | undefined)?.content as Json | undefined;
    const jsonSchema = (bodySchema?.["application/json"] as Json | undefined)?.schema as Json;
    const base = route.path
      .replace("{id}", random.pick(fx.ids))
      .replace("{orgId}", fx.orgId)
      .replace("{extension}", "100")
      .replace("{name}", "welcome")
      .replace("{deliveryId}", "00000000-0000-4000-8000-000000000000");
    for (const variant of variants(sample(jsonSchema, components, fx), route.method !== "get")) {
      const path = `/api/v1${variant.path ? variant.path(base) : base}`;
      const url = `${fx.app.url}${path}${variant.query ? `?${variant.query}` : ""}`;
      const headers = { ...credentials(route), ...variant.headers };
      let status = 0;
      let contentType = "";
      let body: unknown;
      try {
        const res = await send(url, route.method.toUpperCase(), headers, variant.body);
        status = res.status;
        contentType = res.contentType;
        const text = res.text;
        try {
          body = text ? JSON.parse(text) : undefined;
        } catch {
          body = text;
        }
      } catch (error) {
        failures.push(
          `${route.method} ${route.path} [${variant.kind}]: ${(error as Error).message}`,
        );
        continue;
      }
      sent++;
      statuses.set(status, (statuses.get(status) ?? 0) + 1);
      const where = `${route.method.toUpperCase()} ${route.path} [${variant.kind}]`;
      if (status >= 500) failures.push(`${where}: ${status} ${JSON.stringify(body)}`);
      const broken = check(route.method, path, { status, contentType, body });
      if (broken) failures.push(`${where}: ${broken}`);
    }
  }
  const counts = [...statuses].sort(([a], [b]) => a - b).map(([s, n]) => `${s}: ${n}`);
  console.log(`  fuzz: ${sent} requests over ${routes.length} operations (${counts.join(", ")})`);
  assert.ok(sent > 1500, `sent ${sent} requests`);
  assert.equal(failures.slice(0, 60), [], `${failures.length} failures (seed ${SEED})`);
});

test.run();
