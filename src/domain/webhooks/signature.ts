/**
 * Webhook signatures (SPEC.md, Webhook signatures): HMAC-SHA256, keyed with the
 * endpoint's signing secret, over `${X-SERVICE-TIMESTAMP}.${raw body}`, sent as
 * lowercase hex in X-SERVICE-SIGNATURE. The timestamp is milliseconds since the
 * Unix epoch. Pure: no clock, no I/O.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

/** Lowercase hex of a SHA-256 digest: 64 characters. */
const HEX_DIGEST = /^[0-9a-f]{64}$/;
/** A timestamp header is decimal digits only, as signWebhook writes it. */
const TIMESTAMP = /^\d{1,16}$/;

function hmacHex(secret: string, timestampText: string, rawBody: string): string {
  return createHmac('sha256', secret).update(`${timestampText}.${rawBody}`, 'utf8').digest('hex');
}

/** The X-SERVICE-SIGNATURE value for a delivery: lowercase hex HMAC-SHA256 of `${timestampMs}.${rawBody}`. */
export function signWebhook(secret: string, timestampMs: number, rawBody: string): string {
  if (!Number.isSafeInteger(timestampMs) || timestampMs < 0) {
    throw new RangeError(`webhook timestamp must be a non-negative integer of milliseconds (got ${timestampMs})`);
  }
  return hmacHex(secret, String(timestampMs), rawBody);
}

/**
 * True when signatureHeader is the signature of rawBody at timestampHeader, both
 * taken exactly as received. Missing or malformed headers are false, never an
 * exception. The digest comparison takes the same time wherever the first
 * difference is. Replay windows (how old a timestamp may be) are the caller's.
 */
export function verifyWebhook(secret: string, timestampHeader: string | undefined, rawBody: string, signatureHeader: string | undefined): boolean {
  if (timestampHeader === undefined || signatureHeader === undefined) return false;
  if (!TIMESTAMP.test(timestampHeader)) return false;
  const given = signatureHeader.trim().toLowerCase();
  if (!HEX_DIGEST.test(given)) return false;
  const expected = Buffer.from(hmacHex(secret, timestampHeader, rawBody), 'hex');
  return timingSafeEqual(Buffer.from(given, 'hex'), expected);
}
