// Realistic `example`s for the request bodies of the OpenAPI document. Without them, Swagger UI's
// "Try it out" fills each patterned string with text generated from its regular expression (a
// user named `{}xyx}|zz...`), which the server then refuses or, worse, stores. Each string
// property with a `pattern` gets the first candidate for its name that its pattern accepts;
// test/api/openapi.test.ts fails for a patterned property no candidate fits, so a new field
// cannot bring the noise back.

type Json = Record<string, unknown>;

/** Example values by property name, most common meaning first. */
export const EXAMPLES_BY_NAME: Readonly<Record<string, readonly string[]>> = {
  name: ["Sales", "carrier"],
  description: ["Weekday support line"],
  label: ["Office"],
  company: ["Acme Trading Co."],
  owner: ["Priya Sharma"],
  source: ["website"],
  options: ["Gold"],
  phone: ["+919876543210"],
  phone_number: ["+919876543210"],
  email: ["alice@example.com"],
  extension: ["1001"],
  number: ["2000", "+918065978001"],
  from: ["1001"],
  to: ["+919876543210", "node-2"],
  did: ["+918065978001"],
  caller: ["+919876543210"],
  digits: ["1"],
  digit: ["1"],
  action_type: ["queue"],
  action_destination: ["2000"],
  routing_destination: ["5000"],
  timeout_destination: ["1001"],
  time_zone: ["Europe/London"],
  at: ["2026-03-27T18:30:00Z"],
  start: ["09:00"],
  end: ["17:30"],
  start_date: ["2026-12-25"],
  end_date: ["2026-12-26"],
  destination: ["1001"],
  open_destination: ["2000"],
  closed_destination: ["1001"],
  outbound_did: ["+918065978001"],
  caller_id_override: ["+918065978001"],
  prepend_digits: ["0"],
  patterns: ["_91[6-9]XXXXXXXXX"],
  trunk: ["carrier"],
  host: ["sip.carrier.example"],
  match: ["203.0.113.10"],
  username: ["acme-trunk"],
  password: ["Carrier-Secret-2026"],
  sip_password: ["Phone-Secret-2026"],
  moh: ["default"],
  greeting_language: ["en-IN"],
  greeting_voice: ["en-IN-standard"],
  slug: ["acme"],
  tags: ["vip"],
  interface: ["wg-acme"],
  gateway_address: ["10.60.0.1/30"],
  customer_address: ["10.60.0.2/30"],
  customer_networks: ["192.168.10.0/24"],
  gateway_endpoint: ["vpn.pbx.example:51820"],
  customer_endpoint: ["vpn.acme.example:51820"],
  ami_host: ["10.0.0.12"],
  ami_username: ["pbxctl"],
  ami_secret: ["Ami-Secret-2026"],
  sip_address: ["10.0.0.12:5060"],
  node: ["node-2"],
  standby_node: ["node-3"],
  phone_number_id: ["106540352242922"],
};

/** The example for property `name` that `pattern` accepts, if any. */
export function exampleFor(name: string, pattern: string): string | undefined {
  const test = new RegExp(pattern, "u");
  return EXAMPLES_BY_NAME[name]?.find((candidate) => test.test(candidate));
}

/**
 * `schema` (an OpenAPI schema, already converted) with an `example` on every patterned string
 * property that has none, found by the property's name (an array's items by the array's name).
 */
export function withRequestExamples(schema: unknown, name = ""): unknown {
  if (typeof schema !== "object" || schema === null || Array.isArray(schema)) return schema;
  const input = schema as Json;
  const out: Json = { ...input };
  if (
    input.type === "string" &&
    typeof input.pattern === "string" &&
    input.example === undefined &&
    name !== ""
  ) {
    const example = exampleFor(name, input.pattern);
    if (example !== undefined) out.example = example;
  }
  if (input.properties) {
    out.properties = Object.fromEntries(
      Object.entries(input.properties as Json).map(([key, sub]) => [
        key,
        withRequestExamples(sub, key),
      ]),
    );
  }
  if (input.items) out.items = withRequestExamples(input.items, name);
  for (const combiner of ["anyOf", "oneOf", "allOf"] as const) {
    const branches = input[combiner];
    if (Array.isArray(branches)) out[combiner] = branches.map((b) => withRequestExamples(b, name));
  }
  if (typeof input.additionalProperties === "object") {
    out.additionalProperties = withRequestExamples(input.additionalProperties, name);
  }
  return out;
}
