/**
 * What may be a scan target: a public IPv4 address, a fully qualified domain
 * name, or an http/https URL whose host is one of those (SPEC.md, Target).
 * The same rules guard every address the service itself connects to.
 */
import { domainToASCII } from 'node:url';
import { InvalidRequestError } from '../errors.js';
import { isAllowed, looksLikeIpv4, parseIpv4, specialPurposeRange, type Cidr } from './ipv4.js';

export const MAX_TARGET_LENGTH = 2048;

export type TargetKind = 'IPV4' | 'FQDN' | 'URL';

export interface TargetAddress {
  /** Normalised form, used for storage and duplicate detection. */
  value: string;
  kind: TargetKind;
  /** The host part: the address or name a scanner connects to. */
  host: string;
}

/**
 * Suffixes reserved for networks that are never public (RFC 6761, RFC 6762,
 * RFC 7686, RFC 8375, ICANN's .internal): a name under them cannot be a
 * public server.
 */
const NON_PUBLIC_SUFFIXES = ['localhost', 'local', 'internal', 'home.arpa', 'onion'];

/** True for an IPv6 literal, by asking the WHATWG URL parser (keeps this module free of socket modules). */
function isIPv6(text: string): boolean {
  return text.includes(':') && URL.canParse(`http://[${text}]/`);
}

const LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;

/**
 * What a refusal names: `target`, or the setting a host was given in
 * (`scanner_settings.zap.seed_urls`): the same rules guard both.
 */
export type AddressSubject = string;

function refuse(subject: AddressSubject, raw: string, reason: string): never {
  throw new InvalidRequestError(`${subject} '${truncate(raw)}' ${reason}`);
}

function truncate(text: string): string {
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}

/** Refuses an IPv4 address in a special-purpose range unless an allowed CIDR covers it. */
function assertPublicIpv4(subject: AddressSubject, raw: string, address: number, allow: readonly Cidr[]): void {
  if (isAllowed(address, allow)) return;
  const range = specialPurposeRange(address);
  if (range !== undefined) {
    refuse(subject, raw, `is in the ${range} range; only public IPv4 addresses can be used (an operator can allow a lab range with VIGIL_ALLOW_TARGETS)`);
  }
}

function validateIpv4(subject: AddressSubject, raw: string, text: string, allow: readonly Cidr[]): number {
  const address = parseIpv4(text);
  if (address === undefined) {
    refuse(subject, raw, 'is not a valid IPv4 address: write four decimal numbers 0-255 without leading zeros, such as 93.184.216.34');
  }
  assertPublicIpv4(subject, raw, address, allow);
  return address;
}

function validateHostname(subject: AddressSubject, raw: string, host: string): string {
  const ascii = domainToASCII(host.toLowerCase().replace(/\.$/, ''));
  if (ascii === '' || ascii.length > 253) refuse(subject, raw, 'is not a valid domain name');
  const labels = ascii.split('.');
  if (labels.length < 2) {
    refuse(subject, raw, 'is not a fully qualified domain name: use a name with a domain, such as www.example.com');
  }
  if (!labels.every((label) => LABEL.test(label))) {
    refuse(subject, raw, 'is not a valid domain name: each label is 1-63 letters, digits or hyphens, not starting or ending with a hyphen');
  }
  if (/^\d+$/.test(labels.at(-1)!)) refuse(subject, raw, 'is not a valid domain name: the top-level domain cannot be numeric');
  const suffix = NON_PUBLIC_SUFFIXES.find((name) => ascii === name || ascii.endsWith(`.${name}`));
  if (suffix !== undefined) refuse(subject, raw, `is under .${suffix}, which is reserved for non-public networks`);
  return ascii;
}

function validateHost(subject: AddressSubject, raw: string, host: string, allow: readonly Cidr[]): TargetKind {
  if (host.includes(':') || host.startsWith('[')) refuse(subject, raw, 'is an IPv6 address; only IPv4 addresses are supported');
  if (looksLikeIpv4(host)) {
    validateIpv4(subject, raw, host, allow);
    return 'IPV4';
  }
  validateHostname(subject, raw, host);
  return 'FQDN';
}

function parseUrlTarget(subject: AddressSubject, raw: string, allow: readonly Cidr[]): TargetAddress {
  // The URL parser silently drops tabs and newlines; refuse them instead of scanning something else.
  if (/[\x00-\x20\x7f]/.test(raw)) refuse(subject, raw, 'contains white space or control characters; percent-encode them');
  const scheme = /^([a-z][a-z0-9+.-]*):/i.exec(raw)?.[1]?.toLowerCase();
  if (scheme !== 'http' && scheme !== 'https') {
    refuse(subject, raw, `uses the scheme '${scheme ?? ''}'; only http:// and https:// URLs are supported`);
  }
  if (!URL.canParse(raw) || !/^https?:\/\/[^/?#]/i.test(raw)) refuse(subject, raw, 'is not a valid URL');
  const url = new URL(raw);
  if (url.username !== '' || url.password !== '') {
    refuse(subject, raw, 'contains credentials; remove the user name and password from the URL');
  }
  validateHost(subject, raw, url.hostname, allow);
  const hostname = url.hostname.replace(/\.$/, '');
  const hadPath = /^https?:\/\/[^/?#]+[/?#]/i.test(raw);
  const rest = hadPath ? `${url.pathname}${url.search}${url.hash}` : '';
  const value = `${url.protocol}//${hostname}${url.port === '' ? '' : `:${url.port}`}${rest}`;
  if (value.length > MAX_TARGET_LENGTH) {
    refuse(subject, raw, `is ${value.length} characters long once percent-encoded; the limit is ${MAX_TARGET_LENGTH}`);
  }
  return { value, kind: 'URL', host: hostname };
}

function refuseNonHostForms(subject: AddressSubject, raw: string): void {
  if (/\s/.test(raw)) refuse(subject, raw, 'contains white space');
  if (raw.includes('/')) {
    const prefix = raw.slice(0, raw.indexOf('/'));
    if (looksLikeIpv4(prefix)) refuse(subject, raw, 'is a CIDR range; list individual public IPv4 addresses instead');
    if (isIPv6(prefix)) refuse(subject, raw, 'is an IPv6 range; only individual IPv4 addresses are supported');
    refuse(subject, raw, 'is not an IPv4 address or domain name; a URL needs an http:// or https:// scheme');
  }
  if (isIPv6(raw) || raw.startsWith('[')) refuse(subject, raw, 'is an IPv6 address; only IPv4 addresses are supported');
  if (/^[^:]+:\d+$/.test(raw)) refuse(subject, raw, 'includes a port; give the host alone, or an http(s) URL with the port');
  const scheme = /^([a-z][a-z0-9+.-]*):/i.exec(raw)?.[1];
  if (scheme !== undefined) refuse(subject, raw, `uses the scheme '${scheme.toLowerCase()}'; only http:// and https:// URLs are supported`);
}

/**
 * Validates and normalises a target string; throws InvalidRequestError
 * saying what to change. `subject` names the value in the refusal: another
 * address a scanner would connect to (a ZAP seed URL) obeys the same rules.
 */
export function parseTargetAddress(input: string, allow: readonly Cidr[], subject: AddressSubject = 'target'): TargetAddress {
  const raw = input.trim();
  if (raw === '') throw new InvalidRequestError(`${subject} must not be empty`);
  if (input.length > MAX_TARGET_LENGTH) {
    throw new InvalidRequestError(`${subject} must be at most ${MAX_TARGET_LENGTH} characters (got ${input.length})`);
  }
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(raw)) return parseUrlTarget(subject, raw, allow);
  refuseNonHostForms(subject, raw);
  if (looksLikeIpv4(raw)) {
    validateIpv4(subject, raw, raw, allow);
    return { value: raw, kind: 'IPV4', host: raw };
  }
  const host = validateHostname(subject, raw, raw);
  return { value: host, kind: 'FQDN', host };
}
