/**
 * Webhook delivery over HTTPS (SPEC.md, Delivery rules; DESIGN.md decision 12).
 * One POST per call, signed, with a hard deadline; never follows redirects.
 * The agent guards every connection: it resolves the host itself and refuses
 * private, loopback, reserved and IPv6 addresses unless an allowed range
 * covers them, at connect time, so a name that re-resolves to an internal
 * address after validation (DNS rebinding) is still refused. TLS is always
 * verified, against the system roots plus an optional extra CA.
 */
import { lookup as dnsLookup } from 'node:dns/promises';
import type { LookupAddress } from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';
import { createSecureContext, rootCertificates } from 'node:tls';
import { performance } from 'node:perf_hooks';
import { Agent, buildConnector, request } from 'undici';
import { isAllowed, parseIpv4, specialPurposeRange, type Cidr } from '../../domain/targets/ipv4.js';
import { signWebhook } from '../../domain/webhooks/signature.js';

const DEFAULT_DELIVERY_TIMEOUT_MS = 5000;
/** How much of a response body is read (then discarded) so the connection can be reused. */
const RESPONSE_BODY_CAP_BYTES = 16 * 1024;

/** Resolves a host name to its addresses; injectable so tests can play DNS. */
export type HostLookup = (hostname: string) => Promise<LookupAddress[]>;

export interface WebhookAgentOptions {
  /** PEM of an extra CA to trust besides the system roots (VIGIL_WEBHOOK_CA_FILE). */
  extraCaPem?: string;
  /** Ranges exempt from the address guard (VIGIL_ALLOW_TARGETS). */
  allow: readonly Cidr[];
  lookup?: HostLookup;
}

/**
 * The message names the host and the rule, never the address a name resolved
 * to: it is shown to the tenant in the endpoint's delivery log, and the
 * address may be an internal DNS answer (issue 26). `address` keeps it for
 * the service's log.
 */
class RefusedAddressError extends Error {
  readonly code = 'VIGIL_REFUSED_ADDRESS';
  constructor(
    host: string,
    readonly address: string,
    reason: string,
  ) {
    super(`refused to connect to ${host}: ${address === host ? 'it is' : 'it resolves to'} ${reason}`);
    this.name = 'RefusedAddressError';
  }
}

const systemLookup: HostLookup = (hostname) => dnsLookup(hostname, { all: true, family: 4 });

/** Why the address may not be connected to, or undefined when it may. */
function addressRefusal(address: string, allow: readonly Cidr[]): string | undefined {
  const value = parseIpv4(address);
  if (value === undefined) {
    return isIP(address) === 6 ? 'an IPv6 address; webhooks are delivered to IPv4 addresses only' : 'not an IPv4 address';
  }
  if (isAllowed(value, allow)) return undefined;
  const range = specialPurposeRange(value);
  return range === undefined ? undefined : `an address in the ${range} range`;
}

/** A net/tls `lookup` that resolves with `resolve` and fails when any answer is refused. */
function guardedLookup(resolve: HostLookup, allow: readonly Cidr[]): LookupFunction {
  return (hostname, options, callback) => {
    resolve(hostname)
      .then((addresses) => {
        if (addresses.length === 0) throw Object.assign(new Error(`${hostname} has no IPv4 address`), { code: 'ENOTFOUND' });
        for (const { address } of addresses) {
          const reason = addressRefusal(address, allow);
          if (reason !== undefined) throw new RefusedAddressError(hostname, address, reason);
        }
        if (options.all) callback(null, addresses);
        else callback(null, addresses[0]!.address, addresses[0]!.family);
      })
      .catch((error: NodeJS.ErrnoException) => callback(error, '', 0));
  };
}

/** An undici Agent for webhook deliveries: https only, address-guarded, TLS verified. */
export function createWebhookAgent(options: WebhookAgentOptions): Agent {
  const allow = [...options.allow];
  const connectTls = buildConnector({
    // Made once: given `ca` instead, every connection would parse all the
    // system roots again (tens of milliseconds of CPU each).
    secureContext: options.extraCaPem === undefined ? undefined : createSecureContext({ ca: [...rootCertificates, options.extraCaPem] }),
    rejectUnauthorized: true,
    lookup: guardedLookup(options.lookup ?? systemLookup, allow),
  });
  const connect: buildConnector.connector = (target, callback) => {
    if (target.protocol !== 'https:') {
      callback(new Error(`refused to connect to ${target.hostname}: webhooks are delivered over https only`), null);
      return;
    }
    // net.connect skips `lookup` for address literals, so check them here.
    const host = target.hostname.replace(/^\[(.*)\]$/, '$1');
    if (isIP(host) !== 0) {
      const reason = addressRefusal(host, allow);
      if (reason !== undefined) {
        callback(new RefusedAddressError(host, host, reason), null);
        return;
      }
    }
    connectTls(target, callback);
  };
  return new Agent({ connect });
}

export interface WebhookDeliveryRequest {
  url: string;
  secret: string;
  /** The serialized Event object, sent and signed byte for byte. */
  body: string;
  timestampMs: number;
  timeoutMs?: number;
  agent: Agent;
}

export interface WebhookDeliveryResult {
  ok: boolean;
  status?: number;
  error?: string;
  durationMs: number;
  /** The address the endpoint's name resolved to when it was refused: for the service's log, not the tenant's delivery log. */
  refusedAddress?: string;
}

function describeError(error: unknown, timedOut: boolean, timeoutMs: number): string {
  if (timedOut) return `no response within ${timeoutMs} ms`;
  const parts: string[] = [];
  for (let cause: unknown = error; cause instanceof Error && parts.length < 3; cause = cause.cause) {
    const code = (cause as NodeJS.ErrnoException).code;
    parts.push(code !== undefined && !cause.message.includes(code) ? `${cause.message} (${code})` : cause.message);
  }
  return parts.length > 0 ? parts.join(': ') : String(error);
}

function refusalIn(error: unknown): RefusedAddressError | undefined {
  for (let cause: unknown = error, depth = 0; cause instanceof Error && depth < 3; cause = cause.cause, depth++) {
    if (cause instanceof RefusedAddressError) return cause;
  }
  return undefined;
}

/** Reads at most RESPONSE_BODY_CAP_BYTES of the body and discards it. */
async function drain(body: AsyncIterable<Uint8Array> & { destroy(): unknown }): Promise<void> {
  let read = 0;
  for await (const chunk of body) {
    read += chunk.byteLength;
    if (read >= RESPONSE_BODY_CAP_BYTES) break;
  }
  body.destroy();
}

/**
 * POSTs one signed event. Any 2xx is delivered; another status, a refused or
 * failed connection, or no response within timeoutMs is a failure the caller
 * retries. Never throws for delivery problems.
 */
export async function deliverWebhook(delivery: WebhookDeliveryRequest): Promise<WebhookDeliveryResult> {
  const timeoutMs = delivery.timeoutMs ?? DEFAULT_DELIVERY_TIMEOUT_MS;
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  const controller = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort();
  }, timeoutMs);
  try {
    if (!/^https:\/\//i.test(delivery.url)) {
      return { ok: false, error: 'webhooks are delivered over https only', durationMs: elapsed() };
    }
    const response = await request(delivery.url, {
      method: 'POST',
      dispatcher: delivery.agent,
      signal: controller.signal,
      headers: {
        'content-type': 'application/json',
        'user-agent': 'Vigil-Webhooks/1',
        'x-service-timestamp': String(delivery.timestampMs),
        'x-service-signature': signWebhook(delivery.secret, delivery.timestampMs, delivery.body),
      },
      body: delivery.body,
    });
    const status = response.statusCode;
    await drain(response.body).catch(() => undefined);
    const ok = status >= 200 && status < 300;
    return ok ? { ok, status, durationMs: elapsed() } : { ok, status, error: `HTTP ${status}`, durationMs: elapsed() };
  } catch (error) {
    const refused = refusalIn(error);
    return {
      ok: false,
      error: describeError(error, timedOut, timeoutMs),
      durationMs: elapsed(),
      ...(refused === undefined ? {} : { refusedAddress: refused.address }),
    };
  } finally {
    clearTimeout(timer);
  }
}
