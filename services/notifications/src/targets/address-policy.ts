import { isIPv4, isIPv6 } from 'node:net';
import type { Environment } from '@billing/contracts';

/**
 * Where webhooks may go (issue 12, part 6; docs/webhooks.md, "Where webhooks may go"). Merchants
 * name the URL, so a webhook is a request the platform makes on their behalf from inside its
 * network: to the cloud's metadata service, the database, a service's port or the gateway
 * itself unless it is refused. Hosts are checked by name and by every address they resolve to.
 *
 * What is internal, by kind:
 * - `loopback`: 127.0.0.0/8, ::1, `localhost` and `*.localhost`
 * - `private`: 10/8, 172.16/12, 192.168/16, fec0::/10 (site-local)
 * - `shared`: 100.64/10 (carrier-grade NAT, used inside clouds)
 * - `unique_local`: fc00::/7
 * - `internal_name`: a name without a dot (`redis`, resolved through search domains), or under
 *   `.internal`, `.local`, `.localdomain`, `.home.arpa`, `.lan`, `.intranet`, `.corp`
 * - `link_local`: 169.254/16, fe80::/10
 * - `metadata`: cloud metadata services by address (169.254.169.254, 169.254.170.2,
 *   100.100.100.200, 192.0.0.192, fd00:ec2::254) or name (`metadata`,
 *   `metadata.google.internal`, `metadata.goog`, `instance-data`, ...)
 * - `unspecified`: 0.0.0.0/8, ::  (0.0.0.0 reaches this host on Linux)
 * - `multicast`: 224/4, ff00::/8; `broadcast`: 255.255.255.255
 * - `reserved`: every other special-purpose range (192.0.0/24, documentation, benchmarking
 *   198.18/15, 240/4, and IPv6 outside 2000::/3, Teredo, documentation, discard).
 * IPv6 forms that carry an IPv4 address (mapped ::ffff:0:0/96, compatible ::/96, NAT64
 * 64:ff9b::/96, 6to4 2002::/16) are judged by that IPv4 address.
 */
export type InternalKind =
  | 'loopback'
  | 'private'
  | 'shared'
  | 'unique_local'
  | 'internal_name'
  | 'link_local'
  | 'metadata'
  | 'unspecified'
  | 'multicast'
  | 'broadcast'
  | 'reserved';

/**
 * What `WEBHOOK_ALLOW_PRIVATE_TARGETS=sandbox` lets Sandbox endpoints reach, over http or
 * https: a developer's own machine and network. Never link-local (metadata lives there), the
 * metadata services, 0.0.0.0, multicast, broadcast or reserved ranges, and never Production.
 */
const ALLOWABLE: ReadonlySet<InternalKind> = new Set([
  'loopback',
  'private',
  'shared',
  'unique_local',
  'internal_name',
]);

const DESCRIPTIONS: Record<InternalKind, string> = {
  loopback: 'a loopback address',
  private: 'a private network address',
  shared: 'a carrier-grade NAT (shared) address',
  unique_local: 'a unique local IPv6 address',
  internal_name: 'an internal host name',
  link_local: 'a link-local address',
  metadata: 'a cloud metadata service',
  unspecified: 'the unspecified address',
  multicast: 'a multicast address',
  broadcast: 'the broadcast address',
  reserved: 'a reserved address',
};

/** Which environments may reach private targets: `WEBHOOK_ALLOW_PRIVATE_TARGETS`. */
export interface TargetPolicy {
  privateTargetsAllowedIn: readonly Environment[];
}

export const STRICT_POLICY: TargetPolicy = { privateTargetsAllowedIn: [] };

/**
 * `WEBHOOK_ALLOW_PRIVATE_TARGETS`: `sandbox` lets Sandbox endpoints reach loopback and private
 * networks (the embedded default, `npm start`, turns it on); unset, empty or `none` allows none.
 * Any other value stops the service at start rather than guess.
 */
export function targetPolicyFromConfig(config: Record<string, string | undefined>): TargetPolicy {
  const value = (config.WEBHOOK_ALLOW_PRIVATE_TARGETS ?? '').trim().toLowerCase();
  if (value === '' || value === 'none') return STRICT_POLICY;
  if (value === 'sandbox') return { privateTargetsAllowedIn: ['SANDBOX'] };
  throw new Error(`WEBHOOK_ALLOW_PRIVATE_TARGETS must be "sandbox" or "none", not "${value}"`);
}

const allowsPrivate = (policy: TargetPolicy, environment: Environment) =>
  policy.privateTargetsAllowedIn.includes(environment);

/** A refused target: why, in words for the delivery log and the 422. */
export interface Refusal {
  kind: InternalKind | 'scheme';
  reason: string;
}

const refusal = (kind: InternalKind, what: string): Refusal => ({
  kind,
  reason: `${what} is ${DESCRIPTIONS[kind]}`,
});

// ------------------------------------------------------------------ addresses

/** The kind of an IP address (any form `node:net` accepts), or undefined when it is public. */
export function classifyAddress(address: string): InternalKind | undefined {
  const bare = address.replace(/^\[|\]$/g, '');
  if (isIPv4(bare)) return classifyIPv4(ipv4ToNumber(bare));
  if (isIPv6(bare)) return classifyIPv6(parseIPv6(bare));
  return 'reserved'; // not an address at all: never connect to it
}

const METADATA_IPV4 = new Set(['169.254.169.254', '169.254.170.2', '100.100.100.200', '192.0.0.192']);

function ipv4ToNumber(address: string): number {
  return address.split('.').reduce((n, part) => n * 256 + Number(part), 0);
}

const numberToIPv4 = (n: number) => [n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255].join('.');

/** [first address, prefix length, kind], most specific first where ranges nest. */
const IPV4_RANGES: Array<[string, number, InternalKind]> = [
  ['0.0.0.0', 8, 'unspecified'],
  ['10.0.0.0', 8, 'private'],
  ['100.64.0.0', 10, 'shared'],
  ['127.0.0.0', 8, 'loopback'],
  ['169.254.0.0', 16, 'link_local'],
  ['172.16.0.0', 12, 'private'],
  ['192.0.0.0', 24, 'reserved'],
  ['192.0.2.0', 24, 'reserved'],
  ['192.88.99.0', 24, 'reserved'],
  ['192.168.0.0', 16, 'private'],
  ['198.18.0.0', 15, 'reserved'],
  ['198.51.100.0', 24, 'reserved'],
  ['203.0.113.0', 24, 'reserved'],
  ['224.0.0.0', 4, 'multicast'],
  ['255.255.255.255', 32, 'broadcast'],
  ['240.0.0.0', 4, 'reserved'],
];

function classifyIPv4(n: number): InternalKind | undefined {
  if (METADATA_IPV4.has(numberToIPv4(n))) return 'metadata';
  for (const [first, prefix, kind] of IPV4_RANGES) {
    const mask = prefix === 0 ? 0 : (0xffffffff << (32 - prefix)) >>> 0;
    if ((n & mask) >>> 0 === ipv4ToNumber(first)) return kind;
  }
  return undefined;
}

/** Eight 16-bit groups; `node:net` has already said it is valid IPv6. */
function parseIPv6(address: string): number[] {
  let text = address.toLowerCase();
  const zone = text.indexOf('%');
  if (zone >= 0) text = text.slice(0, zone);
  // A trailing dotted IPv4 part becomes two groups.
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted) {
    const n = ipv4ToNumber(dotted[1]!);
    text = `${text.slice(0, dotted.index)}${(n >>> 16).toString(16)}:${(n & 0xffff).toString(16)}`;
  }
  const [head, tail] = text.split('::') as [string, string | undefined];
  const groups = (part: string | undefined) => (part ? part.split(':').map((g) => parseInt(g, 16)) : []);
  const left = groups(head);
  const right = groups(tail);
  const middle = tail === undefined ? [] : new Array<number>(8 - left.length - right.length).fill(0);
  return [...left, ...middle, ...right];
}

const METADATA_IPV6 = 'fd00:ec2:0:0:0:0:0:254';

function classifyIPv6(g: number[]): InternalKind | undefined {
  const embedded = (hi: number, lo: number) => classifyIPv4(((hi << 16) >>> 0) + lo) ?? undefined;
  if (g.map((x) => x.toString(16)).join(':') === METADATA_IPV6) return 'metadata';
  const zeros = (from: number, to: number) => g.slice(from, to).every((x) => x === 0);
  if (zeros(0, 8)) return 'unspecified';
  if (zeros(0, 7) && g[7] === 1) return 'loopback';
  // IPv4-mapped ::ffff:a.b.c.d and IPv4-compatible ::a.b.c.d
  if (zeros(0, 5) && (g[5] === 0xffff || g[5] === 0)) return embedded(g[6]!, g[7]!) ?? 'reserved';
  // NAT64 64:ff9b::/96 reaches the IPv4 address it embeds
  if (g[0] === 0x64 && g[1] === 0xff9b && zeros(2, 6)) return embedded(g[6]!, g[7]!);
  // 6to4 2002:AABB:CCDD::/48 embeds the IPv4 address AA.BB.CC.DD
  if (g[0] === 0x2002) return embedded(g[1]!, g[2]!);
  const first = g[0]!;
  if ((first & 0xfe00) === 0xfc00) return 'unique_local';
  if ((first & 0xffc0) === 0xfe80) return 'link_local';
  if ((first & 0xffc0) === 0xfec0) return 'private';
  if ((first & 0xff00) === 0xff00) return 'multicast';
  // Only global unicast 2000::/3 is public; within it, Teredo 2001::/32, 2001:db8::/32
  // (documentation), 2001:2::/48 (benchmarking), 2001:10::/28 (ORCHID) are not.
  if ((first & 0xe000) !== 0x2000) return 'reserved';
  if (first === 0x2001 && (g[1] === 0 || g[1] === 0xdb8 || g[1] === 2 || (g[1]! & 0xfff0) === 0x10)) return 'reserved';
  return undefined;
}

// ------------------------------------------------------------------ names

const METADATA_NAMES = new Set([
  'metadata',
  'metadata.google.internal',
  'metadata.goog',
  'metadata.azure.com',
  'metadata.packet.net',
  'instance-data',
  'instance-data.ec2.internal',
]);
const INTERNAL_SUFFIXES = ['.internal', '.local', '.localdomain', '.home.arpa', '.lan', '.intranet', '.corp'];

/** The kind of a host name (not an address), or undefined when only its addresses can tell. */
export function classifyName(hostname: string): InternalKind | undefined {
  const name = hostname.toLowerCase().replace(/\.+$/, '');
  if (METADATA_NAMES.has(name)) return 'metadata';
  if (name === 'localhost' || name.endsWith('.localhost')) return 'loopback';
  if (!name.includes('.')) return 'internal_name';
  if (INTERNAL_SUFFIXES.some((suffix) => name.endsWith(suffix))) return 'internal_name';
  return undefined;
}

// ------------------------------------------------------------------ URLs

/** The host of a parsed URL as an address (brackets removed) when it is one. */
export function addressOf(url: URL): string | undefined {
  const host = url.hostname.replace(/^\[|\]$/g, '');
  return isIPv4(host) || isIPv6(host) ? host : undefined;
}

/**
 * Whether a webhook may go to `url` as far as its text tells: the scheme (https; http only to
 * targets the policy allows privately, in Sandbox) and the host, an address in any spelling
 * (the WHATWG URL parser turns `0x7f.1`, `2130706433` and `017700000001` into `127.0.0.1`) or a
 * name. A name's addresses are checked when the webhook is sent (`checkResolved`).
 */
export function checkTarget(url: URL, environment: Environment, policy: TargetPolicy): Refusal | undefined {
  const address = addressOf(url);
  const kind = address ? classifyAddress(address) : classifyName(url.hostname);
  const allowed = kind === undefined || (ALLOWABLE.has(kind) && allowsPrivate(policy, environment));
  if (!allowed) return refusal(kind!, address ?? url.hostname);
  if (url.protocol === 'https:') return undefined;
  if (url.protocol === 'http:' && kind !== undefined) return undefined; // allowed private target
  return {
    kind: 'scheme',
    reason: allowsPrivate(policy, environment)
      ? 'must use https (http only to loopback and private networks in Sandbox)'
      : 'must use https',
  };
}

/**
 * The resolved addresses of a target's host name, all of which must be allowed (one internal
 * address among public ones is refused too: the connection could be made to any of them).
 */
export function checkResolved(
  hostname: string,
  addresses: readonly string[],
  environment: Environment,
  policy: TargetPolicy,
): Refusal | undefined {
  if (addresses.length === 0) return { kind: 'reserved', reason: `${hostname} resolves to no address` };
  for (const address of addresses) {
    const kind = classifyAddress(address);
    if (kind === undefined || (ALLOWABLE.has(kind) && allowsPrivate(policy, environment))) continue;
    // Not the address itself: the delivery log would map internal DNS for whoever reads it.
    return { kind, reason: `${hostname} resolves to ${DESCRIPTIONS[kind]}` };
  }
  return undefined;
}
