/**
 * Which requested targets a Scan may really scan: every address a host name
 * resolves to must be public (or allowed), else the target is skipped and
 * never contacted (DNS rebinding to a private address included).
 */
import type { Cidr } from '../targets/ipv4.js';
import { isAllowed, parseIpv4, specialPurposeRange } from '../targets/ipv4.js';
import type { RequestedTarget, ResolvedTarget, SkippedTarget } from './scan.js';

export type Resolution = { ok: true; addresses: string[] } | { ok: false; error: string };

/** The host a scanner connects to for a stored target value (IPv4, name, or URL). */
export function hostOf(target: string): string {
  return /^https?:\/\//i.test(target) ? new URL(target).hostname : target;
}

export function classifyResolution(
  requested: RequestedTarget,
  resolution: Resolution,
  allow: readonly Cidr[],
): { resolved: ResolvedTarget } | { skipped: SkippedTarget } {
  if (!resolution.ok) return { skipped: { targetId: requested.targetId, skippedReason: `DNS lookup failed: ${resolution.error}` } };
  if (resolution.addresses.length === 0) return { skipped: { targetId: requested.targetId, skippedReason: 'DNS lookup returned no IPv4 address' } };
  for (const address of resolution.addresses) {
    const numeric = parseIpv4(address);
    if (numeric === undefined) return { skipped: { targetId: requested.targetId, skippedReason: `resolves to ${address}, which is not an IPv4 address` } };
    const range = isAllowed(numeric, allow) ? undefined : specialPurposeRange(numeric);
    if (range !== undefined) {
      return { skipped: { targetId: requested.targetId, skippedReason: `resolves to ${address} in the ${range} range; only public addresses are scanned` } };
    }
  }
  return { resolved: { targetId: requested.targetId, target: requested.target, addresses: resolution.addresses } };
}

/**
 * What a runner hands a scanner definition: the targets as stored, and for
 * each host name the addresses checked above, so that the scanner connects
 * to those instead of resolving the name again (issue 16: a name may rebind
 * between the check and the scan).
 */
export function scannerTargets(resolved: readonly ResolvedTarget[]): { targets: string[]; addresses: Record<string, string[]> } {
  const addresses: Record<string, string[]> = {};
  for (const target of resolved) {
    const host = hostOf(target.target).toLowerCase();
    addresses[host] = [...new Set([...(addresses[host] ?? []), ...target.addresses])];
  }
  return { targets: resolved.map((target) => target.target), addresses };
}
