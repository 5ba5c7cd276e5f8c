// Where an engine node's Asterisk reads its realtime PJSIP rows (issue 25, docs/nodes.md): one
// PostgreSQL schema per node, holding views named like Asterisk's tables (`ps_endpoints`, ...)
// that show only the rows of the orgs the node holds. `pbxctl engine init --node` names them in
// the node's extconfig.conf; the store creates them with the node. Pure, so both sides agree.

/** Longest PostgreSQL identifier (NAMEDATALEN - 1): a longer name is cut without a word. */
const MAX_IDENTIFIER = 63;
const SCHEMA_PREFIX = "pbx_node_";

/** FNV-1a, 32 bits, as 8 hex digits: a short stable tag for names too long to spell out. */
function fnv1a(text: string): string {
  let hash = 0x811c9dc5;
  for (const char of text) {
    hash ^= char.codePointAt(0)!;
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash.toString(16).padStart(8, "0");
}

/**
 * The schema of node `name` (a node name: lowercase letters, digits and `-`): `pbx_node_` and the
 * name with `_` for `-` (one-to-one, since a name has no `_`), so it needs no quoting, which
 * res_config_pgsql never does. A name too long for the 63-character limit keeps its first
 * characters and ends with a hash of the whole name.
 */
export function nodeRealtimeSchema(name: string): string {
  if (!/^[a-z0-9][a-z0-9-]{0,62}$/.test(name)) {
    throw new Error(`not an engine node name: ${JSON.stringify(name)}`);
  }
  const spelled = `${SCHEMA_PREFIX}${name.replace(/-/g, "_")}`;
  if (spelled.length <= MAX_IDENTIFIER) return spelled;
  const tag = `_${fnv1a(name)}`;
  return `${spelled.slice(0, MAX_IDENTIFIER - tag.length)}${tag}`;
}
