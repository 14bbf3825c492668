/**
 * What may be a webhook endpoint (SPEC.md, Delivery rules 1; DESIGN.md decision
 * 12): an absolute https:// URL whose host is a fully qualified domain name or
 * a public IPv4 address, without credentials or fragment. The host rules are
 * the target rules (target-address.ts), so an endpoint cannot point anywhere a
 * scan could not. Validation here is the early, friendly check; the delivery
 * agent checks the resolved address again at connect time.
 */
import { InvalidRequestError } from '../errors.js';
import type { Cidr } from '../targets/ipv4.js';
import { parseTargetAddress, type TargetKind } from '../targets/target-address.js';

export const MAX_ENDPOINT_URL_LENGTH = 2048;

export interface WebhookEndpointUrl {
  /** Normalised URL (lowercase scheme and host, no trailing dot), what deliveries POST to. */
  url: string;
  /** The host name or IPv4 address deliveries connect to. */
  host: string;
  hostKind: Exclude<TargetKind, 'URL'>;
}

function truncate(text: string): string {
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}

function refuse(raw: string, reason: string): never {
  throw new InvalidRequestError(`webhook endpoint URL '${truncate(raw)}' ${reason}`);
}

function checkShape(raw: string): void {
  if (/[\x00-\x20\x7f]/.test(raw)) refuse(raw, 'contains white space or control characters; percent-encode them');
  const scheme = /^([a-z][a-z0-9+.-]*):/i.exec(raw)?.[1]?.toLowerCase();
  if (scheme === undefined) refuse(raw, 'is not an absolute URL; write it as https://host/path');
  if (scheme !== 'https') {
    refuse(raw, `uses the scheme '${scheme}'; webhook endpoints must use https:// with a certificate from a public authority`);
  }
  if (!/^https:\/\/[^/?#]/i.test(raw) || !URL.canParse(raw)) refuse(raw, 'is not a valid URL');
  if (raw.includes('#')) refuse(raw, 'contains a fragment (#...); remove it, fragments are never sent to the server');
}

/** Validates and normalises an endpoint URL; throws InvalidRequestError saying what to change. */
export function parseWebhookEndpointUrl(input: string, allow: readonly Cidr[]): WebhookEndpointUrl {
  const raw = input.trim();
  if (raw === '') throw new InvalidRequestError('webhook endpoint URL must not be empty');
  if (input.length > MAX_ENDPOINT_URL_LENGTH) {
    throw new InvalidRequestError(`webhook endpoint URL must be at most ${MAX_ENDPOINT_URL_LENGTH} characters (got ${input.length})`);
  }
  checkShape(raw);
  try {
    // Credentials, IPv6 literals, special-purpose addresses, non-public names and
    // the encoded length limit are the target rules; reword their subject only.
    const target = parseTargetAddress(raw, allow);
    return { url: target.value, host: target.host, hostKind: /^[\d.]+$/.test(target.host) ? 'IPV4' : 'FQDN' };
  } catch (error) {
    if (error instanceof InvalidRequestError) {
      throw new InvalidRequestError(error.message.replace(/^target '/, "webhook endpoint URL '"));
    }
    throw error;
  }
}
