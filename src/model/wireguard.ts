// WireGuard rules of customer tunnels (`/customer-tunnels/*`, docs/tunnels.md): the patterns
// request schemas check, the `wg-quick` file printer, and the parser of `wg show <iface> dump`.
// Pure string functions. A `wg-quick` file is a config format like Asterisk's: every value that
// reaches it is checked again here, so no input can add a line, a section or a PostUp command.

/** A Linux interface name as wg-quick accepts it (IFNAMSIZ: at most 15 characters). */
export const WG_INTERFACE = "^[A-Za-z0-9_=+.-]{1,15}$";
/** An address (IPv4 or IPv6) with a prefix length: `10.99.0.1/30`, `fd00:99::1/64`. */
export const WG_CIDR = "^[0-9A-Fa-f:.]{2,45}/[0-9]{1,3}$";
/** `host:port` a peer is reached at: a host name, an IPv4 address or an `[IPv6]` address. */
export const WG_ENDPOINT = "^([A-Za-z0-9.-]{1,253}|\\[[0-9A-Fa-f:.]{2,45}\\]):[0-9]{1,5}$";
/** A WireGuard key: 32 bytes in standard base64 (44 characters, one `=`). */
export const WG_KEY = /^[A-Za-z0-9+/]{42}[AEIMQUYcgkosw480]=$/;

const IPV4 =
  /^(25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])(\.(25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])){3}$/;

/** Whether `value` is an IPv4 address in dotted decimal (no leading zeros). */
export function isIpv4(value: string): boolean {
  return IPV4.test(value);
}

/** Whether `value` is an IPv6 address (`::` compression, optional dotted IPv4 tail). */
export function isIpv6(value: string): boolean {
  if (!/^[0-9A-Fa-f:.]{2,45}$/.test(value)) return false;
  let text = value;
  const lastColon = text.lastIndexOf(":");
  if (text.includes(".")) {
    // A dotted IPv4 tail stands for the last two groups.
    if (!isIpv4(text.slice(lastColon + 1))) return false;
    text = `${text.slice(0, lastColon + 1)}0:0`;
  }
  const halves = text.split("::");
  if (halves.length > 2) return false;
  const groups = (part: string) => (part === "" ? [] : part.split(":"));
  const all = halves.flatMap(groups);
  if (!all.every((g) => /^[0-9A-Fa-f]{1,4}$/.test(g))) return false;
  return halves.length === 2 ? all.length < 8 : all.length === 8;
}

export interface Cidr {
  address: string;
  prefix: number;
  family: 4 | 6;
}

/** `address/prefix` with a real address and a prefix within its family's bits, else undefined. */
export function parseCidr(value: string): Cidr | undefined {
  const match = /^([^/]+)\/([0-9]{1,3})$/.exec(value);
  if (!match) return undefined;
  const address = match[1]!;
  const prefix = Number(match[2]);
  if (isIpv4(address)) return prefix <= 32 ? { address, prefix, family: 4 } : undefined;
  if (isIpv6(address)) return prefix <= 128 ? { address, prefix, family: 6 } : undefined;
  return undefined;
}

/** `host:port` with a port of 1-65535 and a real address inside brackets, else undefined. */
export function parseEndpoint(value: string): { host: string; port: number } | undefined {
  if (!new RegExp(WG_ENDPOINT).test(value)) return undefined;
  const cut = value.lastIndexOf(":");
  const host = value.slice(0, cut);
  const port = Number(value.slice(cut + 1));
  if (port < 1 || port > 65535) return undefined;
  if (host.startsWith("[") && !isIpv6(host.slice(1, -1))) return undefined;
  if (/^[0-9.]+$/.test(host) && !isIpv4(host)) return undefined;
  return { host, port };
}

/** The host address of a CIDR, as a SIP URI writes it (`10.99.0.2`, `[fd00::2]`). */
export function uriHost(cidr: string): string {
  const address = cidr.split("/")[0]!;
  return address.includes(":") ? `[${address}]` : address;
}

/** The single-host range of a CIDR's address (`/32` or `/128`): what a peer may send from. */
export function hostRange(cidr: string): string {
  const address = cidr.split("/")[0]!;
  return `${address}/${address.includes(":") ? 128 : 32}`;
}

export interface WgQuickConfig {
  /** Comment lines at the top (what the file is for). */
  comments: readonly string[];
  privateKey: string;
  addresses: readonly string[];
  listenPort?: number;
  peer: {
    publicKey: string;
    presharedKey: string;
    allowedIps: readonly string[];
    endpoint?: string;
    persistentKeepalive?: number;
  };
}

function checked(value: string, ok: boolean, what: string): string {
  if (!ok)
    throw new Error(`refusing to print ${what} ${JSON.stringify(value)} into a wg-quick file`);
  return value;
}

const cidrOk = (value: string) => new RegExp(WG_CIDR).test(value) && parseCidr(value) !== undefined;
const commentOk = (value: string) => /^[^\u0000-\u001f\u007f]*$/.test(value);

/**
 * A `wg-quick` file: `[Interface]` (key, addresses, listen port) and one `[Peer]`. Throws on a
 * value the API should already have refused (a bug, never user output).
 */
export function renderWgQuick(config: WgQuickConfig): string {
  const lines = config.comments.map((line) => `# ${checked(line, commentOk(line), "comment")}`);
  lines.push("[Interface]");
  lines.push(`PrivateKey = ${checked(config.privateKey, WG_KEY.test(config.privateKey), "key")}`);
  lines.push(
    `Address = ${config.addresses.map((a) => checked(a, cidrOk(a), "address")).join(", ")}`,
  );
  if (config.listenPort !== undefined) {
    const port = config.listenPort;
    if (!Number.isInteger(port) || port < 1 || port > 65535) throw new Error(`bad port ${port}`);
    lines.push(`ListenPort = ${port}`);
  }
  const { peer } = config;
  lines.push("", "[Peer]");
  lines.push(`PublicKey = ${checked(peer.publicKey, WG_KEY.test(peer.publicKey), "key")}`);
  lines.push(`PresharedKey = ${checked(peer.presharedKey, WG_KEY.test(peer.presharedKey), "key")}`);
  lines.push(
    `AllowedIPs = ${peer.allowedIps.map((a) => checked(a, cidrOk(a), "allowed IP range")).join(", ")}`,
  );
  if (peer.endpoint !== undefined) {
    const ok = parseEndpoint(peer.endpoint) !== undefined;
    lines.push(`Endpoint = ${checked(peer.endpoint, ok, "endpoint")}`);
  }
  if (peer.persistentKeepalive !== undefined && peer.persistentKeepalive > 0) {
    lines.push(`PersistentKeepalive = ${Math.min(65535, Math.trunc(peer.persistentKeepalive))}`);
  }
  return `${lines.join("\n")}\n`;
}

export interface WgPeerStatus {
  publicKey: string;
  endpoint: string | null;
  allowedIps: string[];
  /** Unix seconds of the last handshake; 0 when none happened. */
  latestHandshake: number;
  rxBytes: number;
  txBytes: number;
}

/**
 * `wg show <iface> dump`: a first line for the interface (private key, public key, listen port,
 * fwmark), then one tab-separated line per peer (public key, preshared key, endpoint, allowed
 * IPs, latest handshake, rx, tx, keepalive). Undefined when the text is not such a dump.
 */
export function parseWgDump(
  text: string,
): { publicKey: string; listenPort: number; peers: WgPeerStatus[] } | undefined {
  const lines = text.split("\n").filter((line) => line.trim() !== "");
  const head = lines[0]?.split("\t");
  if (head?.length !== 4) return undefined;
  const peers: WgPeerStatus[] = [];
  for (const line of lines.slice(1)) {
    const f = line.split("\t");
    if (f.length !== 8) return undefined;
    peers.push({
      publicKey: f[0]!,
      endpoint: f[2] === "(none)" ? null : f[2]!,
      allowedIps: f[3] === "(none)" ? [] : f[3]!.split(","),
      latestHandshake: Number(f[4]) || 0,
      rxBytes: Number(f[5]) || 0,
      txBytes: Number(f[6]) || 0,
    });
  }
  return { publicKey: head[1]!, listenPort: Number(head[2]) || 0, peers };
}
