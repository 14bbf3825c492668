/**
 * Which requested targets a Scan may really scan: every address a host name
 * resolves to must be public (or allowed), else the target is skipped and
 * never contacted (DNS rebinding to a private address included).
 */
import type { Cidr } from '../targets/ipv4.js';
import { isAllowed, parseIpv4, specialPurposeRange } from '../targets/ipv4.js';
import type { RequestedTarget, ResolvedTarget, SkippedTarget } from './scan.js';

export type Resolution = { ok: true; addresses: string[] } | { ok: false; error: string };

/** A host of a scan whose address was refused: the reason is what tenants read, the address goes to the service's log only. */
export interface AddressRefusal {
  scanId: string;
  host: string;
  address: string;
  reason: string;
}

/** The host a scanner connects to for a stored target value (IPv4, name, or URL). */
export function hostOf(target: string): string {
  return /^https?:\/\//i.test(target) ? new URL(target).hostname : target;
}

/**
 * Why a host's addresses may not be scanned, or undefined when they may.
 * The reason names the rule, never the address: tenants read it (skipped
 * reasons, conditions) and the address may be an internal DNS answer
 * (issue 26); `address` is the one refused, for the service's log.
 */
export function resolutionProblem(resolution: Resolution, allow: readonly Cidr[]): { reason: string; address?: string } | undefined {
  if (!resolution.ok) return { reason: `DNS lookup failed: ${resolution.error}` };
  if (resolution.addresses.length === 0) return { reason: 'DNS lookup returned no IPv4 address' };
  for (const address of resolution.addresses) {
    const numeric = parseIpv4(address);
    if (numeric === undefined) return { reason: 'resolves to an address that is not IPv4; only IPv4 addresses are scanned', address };
    const range = isAllowed(numeric, allow) ? undefined : specialPurposeRange(numeric);
    if (range !== undefined) {
      return {
        reason: `resolves to an address in the ${range} range; only public addresses are scanned (an operator can allow a lab range with VIGIL_ALLOW_TARGETS)`,
        address,
      };
    }
  }
  return undefined;
}

export function classifyResolution(
  requested: RequestedTarget,
  resolution: Resolution,
  allow: readonly Cidr[],
): { resolved: ResolvedTarget } | { skipped: SkippedTarget; refusedAddress?: string } {
  const problem = resolutionProblem(resolution, allow);
  if (problem === undefined && resolution.ok) return { resolved: { targetId: requested.targetId, target: requested.target, addresses: resolution.addresses } };
  const { reason, address } = problem ?? { reason: 'DNS lookup failed' };
  return { skipped: { targetId: requested.targetId, skippedReason: reason }, ...(address === undefined ? {} : { refusedAddress: address }) };
}

/**
 * What a runner hands a scanner definition: the targets as stored, and for
 * each host name the addresses checked above, so that the scanner connects
 * to those instead of resolving the name again (issue 16: a name may rebind
 * between the check and the scan).
 */
export function scannerTargets(
  resolved: readonly ResolvedTarget[],
  /** The checked addresses of further hosts the scanner is sent to (a ZAP target's seed URLs and included domains). */
  settingsHosts: Readonly<Record<string, readonly string[]>> = {},
): { targets: string[]; addresses: Record<string, string[]> } {
  const addresses: Record<string, string[]> = Object.fromEntries(Object.entries(settingsHosts).map(([host, found]) => [host.toLowerCase(), [...found]]));
  for (const target of resolved) {
    const host = hostOf(target.target).toLowerCase();
    addresses[host] = [...new Set([...(addresses[host] ?? []), ...target.addresses])];
  }
  return { targets: resolved.map((target) => target.target), addresses };
}
