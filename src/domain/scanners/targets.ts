/**
 * Turns stored targets (public IPv4, host name or http(s) URL) into what each
 * scanner takes on its command line. Targets were validated when they were
 * created; the checks here only keep a bad value from ever reaching a
 * command line as an option.
 */
import { InvalidRequestError } from '../errors.js';
import type { ScanType } from '../risks/finding.js';
import { TARGETS_PER_SCAN } from '../scans/scan.js';
import type { ScannerInput } from './definition.js';

const URL_SCHEME = /^https?:\/\//i;

function assertArgument(value: string, original: string): string {
  if (value === '' || value.startsWith('-') || /[\s\x00-\x1f\x7f]/.test(value)) {
    throw new InvalidRequestError(
      `target '${original.slice(0, 80)}' cannot be passed to a scanner: it is empty, starts with '-' or contains spaces or control characters`,
    );
  }
  return value;
}

/** Refuses an empty target list or one over the type's per-Scan limit (SPEC.md, Limits). */
export function checkTargetCount(type: ScanType, targets: readonly string[]): void {
  const limit = TARGETS_PER_SCAN[type];
  if (targets.length === 0) throw new InvalidRequestError(`a ${type} scan needs at least one target`);
  if (targets.length > limit) {
    throw new InvalidRequestError(
      `a ${type} scan takes at most ${limit} target${limit === 1 ? '' : 's'}; split the ${targets.length} targets into several Scans`,
    );
  }
}

function parsedUrl(target: string): URL | undefined {
  return URL_SCHEME.test(target) && URL.canParse(target) ? new URL(target) : undefined;
}

/** The host a target names: the URL's host name, or the target itself. */
export function hostOf(target: string): string {
  const url = parsedUrl(target);
  return assertArgument(url ? url.hostname : target, target);
}

/** Hosts of the targets without duplicates, in order (two URLs on one host are one nmap target). */
export function uniqueHosts(targets: readonly string[]): string[] {
  return [...new Set(targets.map(hostOf))];
}

const IPV4_LITERAL = /^\d{1,3}(?:\.\d{1,3}){3}$/;

export function isIpv4Literal(host: string): boolean {
  return IPV4_LITERAL.test(host);
}

/**
 * The checked addresses of a host (ScannerInput.addresses), or the host
 * itself when the runner passed none. A host the runner left out is a bug
 * that would let the scanner resolve the name again: refused.
 */
export function vettedAddressesOf(host: string, addresses: ScannerInput['addresses']): string[] {
  if (addresses === undefined) return [host];
  const found = addresses[host.toLowerCase()];
  if (found !== undefined && found.length > 0) return found.map((address) => assertArgument(address, host));
  if (isIpv4Literal(host)) return [host];
  throw new Error(`no checked address for '${host.slice(0, 80)}': the scanner would resolve it again`);
}

/** The targets' hosts as the addresses Vigil checked, without duplicates (nmap scans addresses, never names). */
export function vettedHosts(targets: readonly string[], addresses: ScannerInput['addresses']): string[] {
  return [...new Set(uniqueHosts(targets).flatMap((host) => vettedAddressesOf(host, addresses)))];
}

/** `/etc/hosts` lines pinning each target host name to its checked addresses (IP literals need none). */
export function hostsFileLines(targets: readonly string[], addresses: ScannerInput['addresses']): string[] {
  return uniqueHosts(targets)
    .filter((host) => !isIpv4Literal(host))
    .flatMap((host) => vettedAddressesOf(host, addresses).map((address) => `${address} ${host.toLowerCase()}`));
}

/**
 * host:port for a TLS scanner: a URL's explicit port for https, else 443
 * (an http:// URL names a site whose TLS side, if any, listens on 443).
 */
export function tlsEndpointOf(target: string): string {
  const url = parsedUrl(target);
  if (!url) return `${hostOf(target)}:443`;
  const port = url.protocol === 'https:' && url.port !== '' ? url.port : '443';
  return `${assertArgument(url.hostname, target)}:${port}`;
}

/** A URL for a web scanner: a URL target as is, a bare host as https://host/. */
export function webUrlOf(target: string): string {
  const url = parsedUrl(target);
  return assertArgument(url ? url.href : `https://${hostOf(target)}/`, target);
}
