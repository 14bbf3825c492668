/**
 * The hosts a target's ZAP settings send ZAP to besides the target's own:
 * the hosts of seed_urls (requested before the spider starts) and
 * included_domains (in the crawl's scope). They obey the target address
 * rules (issue 26: a seed URL on 169.254.169.254 made ZAP fetch the cloud
 * metadata): checked when the settings are written, and resolved and pinned
 * when a scan starts, as the target's host is. excluded_domains and cookie
 * domains only narrow what is sent where, so they are not checked.
 */
import { InvalidRequestError } from '../errors.js';
import type { Cidr } from '../targets/ipv4.js';
import { parseTargetAddress } from '../targets/target-address.js';
import type { ZapSettingsInputValue } from './zap-settings.js';

export interface DomainScope {
  host: string;
  subdomains?: boolean;
}

/** A domain setting: a host name, `*.example.com` or `.example.com` for the domain and its subdomains. */
export function domainOf(raw: string, setting: string): DomainScope {
  const text = raw.trim();
  const wildcard = /^\*?\./.test(text);
  const name = text
    .replace(/^\*?\./, '')
    .replace(/^https?:\/\//i, '')
    .replace(/[/?#].*$/, '');
  const host = !/[@:\s]/.test(name) && URL.canParse(`http://${name}/`) ? new URL(`http://${name}/`).hostname : '';
  if (!/^[a-z0-9]([a-z0-9.-]*[a-z0-9])?$/.test(host)) {
    throw new InvalidRequestError(`scanner_settings.zap.${setting}: '${raw.slice(0, 80)}' is not a domain name; write it as example.com or *.example.com`);
  }
  return { host, subdomains: wildcard };
}

export interface SettingsHost {
  /** The setting that names it, as a refusal names it: `scanner_settings.zap.seed_urls`. */
  setting: string;
  /** The host name or IPv4 address, as the URL parser normalises it (`0x7f.1` is 127.0.0.1). */
  host: string;
}

const SEED_URLS = 'scanner_settings.zap.seed_urls';
const INCLUDED_DOMAINS = 'scanner_settings.zap.included_domains';

/**
 * Refuses settings that send ZAP to a host a target could not have: a
 * private, loopback, link-local or reserved IPv4 address outside
 * VIGIL_ALLOW_TARGETS in any form the URL parser reads as one, IPv6, or a
 * name that cannot be public; the refusal names the setting and the rule.
 */
export function assertSettingsHostsAllowed(settings: ZapSettingsInputValue | undefined, allow: readonly Cidr[]): void {
  for (const url of settings?.seed_urls ?? []) parseTargetAddress(url, allow, SEED_URLS);
  for (const domain of settings?.included_domains ?? []) parseTargetAddress(domainOf(domain, 'included_domains').host, allow, INCLUDED_DOMAINS);
}

/** The distinct hosts the settings send ZAP to, other than the target's own host, each with the first setting naming it. */
export function settingsHosts(settings: ZapSettingsInputValue | undefined, targetHost: string): SettingsHost[] {
  const hosts = new Map<string, string>();
  const add = (host: string, setting: string) => {
    const name = host.toLowerCase().replace(/\.$/, '');
    if (name !== targetHost.toLowerCase() && !hosts.has(name)) hosts.set(name, setting);
  };
  for (const url of settings?.seed_urls ?? []) if (URL.canParse(url)) add(new URL(url).hostname, SEED_URLS);
  for (const domain of settings?.included_domains ?? []) add(domainOf(domain, 'included_domains').host, INCLUDED_DOMAINS);
  return [...hosts].map(([host, setting]) => ({ host, setting }));
}
