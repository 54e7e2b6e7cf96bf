/**
 * Where a webhook may be delivered. Without WEBHOOK_ALLOW_PRIVATE_NETWORKS, a URL must be https and every
 * address its host resolves to must be a public unicast one: loopback, private (RFC 1918, unique-local
 * IPv6), link-local (cloud metadata at 169.254.169.254 and fd00:ec2::254 included), CGNAT, multicast,
 * documentation, benchmarking and reserved ranges are refused; an IPv6 address must be global unicast
 * (2000::/3), or carry a public IPv4 address in one of the embeddings that reach it (mapped, SIIT-translated,
 * compatible, the well-known NAT64 prefix, 6to4). A name's trailing dots are dropped before it is
 * resolved (`localhost.` is `localhost`). The check runs when a webhook is saved and
 * again at every attempt, after resolving the name here; the attempt then connects to the address that
 * was checked (deliver.ts), so a name that resolves elsewhere a second time (DNS rebinding) gains nothing.
 */
import { lookup as dnsLookup } from "node:dns/promises";
import { isIP } from "node:net";

export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/** Resolves a name to all its addresses (node:dns lookup, `all: true`: what the system resolver answers). */
export type Lookup = (hostname: string) => Promise<ResolvedAddress[]>;

export const systemLookup: Lookup = async (hostname) =>
  (await dnsLookup(hostname, { all: true, verbatim: true })).map((entry) => ({ address: entry.address, family: entry.family as 4 | 6 }));

/** [network, prefix length, what it is] */
const IPV4_REFUSED: [string, number, string][] = [
  ["0.0.0.0", 8, "a 'this network' address"],
  ["10.0.0.0", 8, "a private address"],
  ["100.64.0.0", 10, "a carrier-grade NAT address"],
  ["127.0.0.0", 8, "a loopback address"],
  ["169.254.0.0", 16, "a link-local address (cloud metadata lives there)"],
  ["172.16.0.0", 12, "a private address"],
  ["192.0.0.0", 24, "an IETF protocol assignment"],
  ["192.0.2.0", 24, "a documentation address"],
  ["192.88.99.0", 24, "a 6to4 relay address"],
  ["192.168.0.0", 16, "a private address"],
  ["198.18.0.0", 15, "a benchmarking address"],
  ["198.51.100.0", 24, "a documentation address"],
  ["203.0.113.0", 24, "a documentation address"],
  ["224.0.0.0", 4, "a multicast address"],
  ["240.0.0.0", 4, "a reserved address"],
];

const IPV6_REFUSED: [string, number, string][] = [
  ["::", 128, "the unspecified address"],
  ["::1", 128, "a loopback address"],
  ["64:ff9b:1::", 48, "a local-use NAT64 address"],
  ["100::", 64, "a discard address"],
  ["2001::", 23, "an IETF protocol assignment (Teredo 2001::/32 among them)"],
  ["2001:db8::", 32, "a documentation address"],
  ["3fff::", 20, "a documentation address"],
  ["fc00::", 7, "a unique-local address (fd00:ec2::254 is cloud metadata)"],
  ["fe80::", 10, "a link-local address"],
  ["fec0::", 10, "a site-local address"],
  ["ff00::", 8, "a multicast address"],
];

function ipv4Bits(address: string): bigint {
  return address.split(".").reduce((bits, part) => (bits << 8n) | BigInt(Number(part)), 0n);
}

/** The 128 bits of an IPv6 address (an embedded dotted IPv4 tail included). */
function ipv6Bits(address: string): bigint {
  let text = address.split("%")[0]!.toLowerCase();
  const dotted = /(\d{1,3}(?:\.\d{1,3}){3})$/.exec(text);
  if (dotted) {
    const v4 = ipv4Bits(dotted[1]!);
    text = `${text.slice(0, -dotted[1]!.length)}${(v4 >> 16n).toString(16)}:${(v4 & 0xffffn).toString(16)}`;
  }
  const [head, tail] = text.split("::");
  const left = head ? head.split(":") : [];
  const right = tail ? tail.split(":") : [];
  const groups = tail === undefined ? left : [...left, ...Array<string>(8 - left.length - right.length).fill("0"), ...right];
  return groups.reduce((bits, group) => (bits << 16n) | BigInt(parseInt(group, 16)), 0n);
}

const inNetwork = (bits: bigint, network: bigint, prefix: number, width: number) =>
  bits >> BigInt(width - prefix) === network >> BigInt(width - prefix);

/** Why an address may not receive webhooks (e.g. "a loopback address"), or undefined for a public one. */
export function refusedAddress(address: string): string | undefined {
  const version = isIP(address.split("%")[0]!);
  if (version === 4) {
    const bits = ipv4Bits(address);
    if (bits === 0xffffffffn) return "the broadcast address";
    return IPV4_REFUSED.find(([network, prefix]) => inNetwork(bits, ipv4Bits(network), prefix, 32))?.[2];
  }
  if (version !== 6) return "not an IP address";
  const bits = ipv6Bits(address);
  // IPv4 inside IPv6, judged by the IPv4 address: mapped (::ffff:a.b.c.d), SIIT-translated
  // (::ffff:0:a.b.c.d), compatible (::a.b.c.d), well-known NAT64 (64:ff9b::/96), 6to4 (2002::/16)
  const low32 = bits & 0xffffffffn;
  const v4 = (n: bigint) => [24n, 16n, 8n, 0n].map((shift) => String((n >> shift) & 0xffn)).join(".");
  const high96 = bits >> 32n;
  if (high96 === 0xffffn || high96 === 0xffff0000n || (high96 === 0n && bits > 1n) || inNetwork(bits, ipv6Bits("64:ff9b::"), 96, 128)) {
    const inner = refusedAddress(v4(low32));
    return inner && `${inner} (inside an IPv6 address)`;
  }
  if (inNetwork(bits, ipv6Bits("2002::"), 16, 128)) {
    const inner = refusedAddress(v4((bits >> 80n) & 0xffffffffn));
    return inner && `${inner} (inside a 6to4 address)`;
  }
  const named = IPV6_REFUSED.find(([network, prefix]) => inNetwork(bits, ipv6Bits(network), prefix, 128))?.[2];
  if (named) return named;
  // the rest of ::/8, 64:ff9b::/16 and other unassigned space: nothing public lives outside 2000::/3
  return inNetwork(bits, ipv6Bits("2000::"), 3, 128) ? undefined : "not a global unicast address";
}

/**
 * A URL's hostname as an address or a name: `[::1]` → `::1`. A name loses its trailing dots: `localhost.`
 * is the same name as `localhost` in DNS, but the system resolver may not know it (getaddrinfo reads
 * /etc/hosts without the dot), so unresolved it would pass the save-time check; the TLS server name
 * is the name without the dot too.
 */
export const hostOf = (url: URL) => url.hostname.replace(/^\[(.*)\]$/, "$1").replace(/\.+$/, "");

export class AddressRefused extends Error {}

/**
 * The addresses of a URL's host, every one of them checked: an IP literal as it is, a name through
 * `lookup`. Throws AddressRefused naming the first refused address (all must be public: a name with one
 * private address among public ones is refused, since any of them could be the one connected to).
 */
export async function resolvePublic(
  url: URL,
  lookup: Lookup = systemLookup,
  refused: (address: string) => string | undefined = refusedAddress,
): Promise<ResolvedAddress[]> {
  const host = hostOf(url);
  if (host === "") throw new AddressRefused("the URL names no host");
  const version = isIP(host);
  const addresses: ResolvedAddress[] = version === 0 ? await lookup(host) : [{ address: host, family: version as 4 | 6 }];
  if (addresses.length === 0) throw new AddressRefused(`${host} resolves to no address`);
  for (const { address } of addresses) {
    const why = refused(address);
    if (why) throw new AddressRefused(version === 0 ? `${host} resolves to ${address}, ${why}` : `${address} is ${why}`);
  }
  return addresses;
}
