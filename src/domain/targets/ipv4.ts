/**
 * IPv4 arithmetic for target and outbound-address rules. Pure and strict: only
 * canonical dotted-quad text is an address (no octal, hex, short or integer
 * forms, which some tools would silently read as another address).
 */
export interface Cidr {
  /** Network address as an unsigned 32-bit integer. */
  base: number;
  prefix: number;
  text: string;
}

const OCTET = /^(?:0|[1-9]\d{0,2})$/;

/** Returns the address as an unsigned 32-bit integer, or undefined when the text is not a canonical IPv4 address. */
export function parseIpv4(text: string): number | undefined {
  const parts = text.split('.');
  if (parts.length !== 4) return undefined;
  let value = 0;
  for (const part of parts) {
    if (!OCTET.test(part)) return undefined;
    const octet = Number(part);
    if (octet > 255) return undefined;
    value = value * 256 + octet;
  }
  return value;
}

/** Looks like an attempt at an IPv4 address (digits and dots only), canonical or not. */
export function looksLikeIpv4(text: string): boolean {
  return /^[\d.]+$/.test(text) && text.includes('.');
}

function mask(prefix: number): number {
  return prefix === 0 ? 0 : (0xffffffff << (32 - prefix)) >>> 0;
}

export function parseCidr(text: string): Cidr {
  const [address, prefixText, ...rest] = text.trim().split('/');
  const base = parseIpv4(address ?? '');
  if (base === undefined || rest.length > 0) throw new Error(`'${text}' is not an IPv4 CIDR`);
  const prefix = prefixText === undefined ? 32 : Number(prefixText);
  if (!/^\d{1,2}$/.test(prefixText ?? '32') || prefix > 32) throw new Error(`'${text}' has a prefix length outside 0..32`);
  return { base: (base & mask(prefix)) >>> 0, prefix, text: text.trim() };
}

export function parseCidrList(text: string): Cidr[] {
  return text
    .split(',')
    .map((item) => item.trim())
    .filter((item) => item !== '')
    .map(parseCidr);
}

export function cidrContains(cidr: Cidr, address: number): boolean {
  return (address & mask(cidr.prefix)) >>> 0 === cidr.base;
}

export function formatIpv4(address: number): string {
  return [24, 16, 8, 0].map((shift) => (address >>> shift) & 0xff).join('.');
}

interface SpecialRange {
  cidr: Cidr;
  name: string;
}

/**
 * Every entry of the IANA IPv4 Special-Purpose Address Registry (RFC 6890 and
 * updates), plus multicast (RFC 5771). None is a public server Vigil should
 * scan or deliver webhooks to, so all are refused; a few registry entries are
 * anycast services marked 'globally reachable' (AS112, AMT, 6to4 relay), and
 * they are refused too because nobody owns them as a scan target.
 */
const SPECIAL_RANGES: SpecialRange[] = [
  ['0.0.0.0/8', '"this network" (RFC 791)'],
  ['10.0.0.0/8', 'private-use (RFC 1918)'],
  ['100.64.0.0/10', 'shared address space (RFC 6598)'],
  ['127.0.0.0/8', 'loopback (RFC 1122)'],
  ['169.254.0.0/16', 'link-local (RFC 3927)'],
  ['172.16.0.0/12', 'private-use (RFC 1918)'],
  ['192.0.0.0/24', 'IETF protocol assignments (RFC 6890)'],
  ['192.0.2.0/24', 'documentation TEST-NET-1 (RFC 5737)'],
  ['192.31.196.0/24', 'AS112-v4 (RFC 7535)'],
  ['192.52.193.0/24', 'AMT (RFC 7450)'],
  ['192.88.99.0/24', 'deprecated 6to4 relay anycast (RFC 7526)'],
  ['192.168.0.0/16', 'private-use (RFC 1918)'],
  ['192.175.48.0/24', 'direct delegation AS112 service (RFC 7534)'],
  ['198.18.0.0/15', 'benchmarking (RFC 2544)'],
  ['198.51.100.0/24', 'documentation TEST-NET-2 (RFC 5737)'],
  ['203.0.113.0/24', 'documentation TEST-NET-3 (RFC 5737)'],
  ['224.0.0.0/4', 'multicast (RFC 5771)'],
  ['240.0.0.0/4', 'reserved (RFC 1112)'],
  ['255.255.255.255/32', 'limited broadcast (RFC 919)'],
]
  .map(([text, name]) => ({ cidr: parseCidr(text!), name: name! }))
  // Most specific first, so 255.255.255.255 is named as broadcast, not as 240.0.0.0/4.
  .sort((a, b) => b.cidr.prefix - a.cidr.prefix);

export const SPECIAL_PURPOSE_RANGES: readonly string[] = SPECIAL_RANGES.map((range) => range.cidr.text).sort();

/** The name of the special-purpose range the address falls in, or undefined for a public address. */
export function specialPurposeRange(address: number): string | undefined {
  const range = SPECIAL_RANGES.find((candidate) => cidrContains(candidate.cidr, address));
  return range ? `${range.cidr.text} ${range.name}` : undefined;
}

export function isAllowed(address: number, allow: readonly Cidr[]): boolean {
  return allow.some((cidr) => cidrContains(cidr, address));
}
