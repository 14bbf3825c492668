/**
 * Which of a scan's targets each finding belongs to. A scanner reports the
 * host it talked to (an address or a name, sometimes inside a URL); the
 * finding goes to the target whose host or resolved addresses match. With a
 * single target there is nothing to choose.
 */
import { hostOf } from '../scans/resolve-targets.js';
import type { ResolvedTarget, SkippedTarget } from '../scans/scan.js';
import type { Finding, UnscannedHost } from './finding.js';

function hostOfLocation(finding: Finding): string[] {
  const hosts = [finding.location.host];
  if (finding.location.url !== undefined && URL.canParse(finding.location.url)) hosts.push(new URL(finding.location.url).hostname);
  return hosts.map((host) => host.toLowerCase().replace(/\.$/, ''));
}

/**
 * The targets the finding belongs to: the one named as the scanner was given
 * it, else the one whose host it reports, else every target whose checked
 * addresses include it. nmap scans addresses, never names (a name could
 * rebind), so one address shared by two names is one machine scanned once,
 * and what it found belongs to both.
 */
export function ownersOf(targets: readonly ResolvedTarget[], finding: Finding): ResolvedTarget[] {
  if (targets.length === 1) return [targets[0]!];
  const name = finding.location.hostname?.toLowerCase().replace(/\.$/, '');
  const byName = name === undefined ? undefined : targets.find((target) => hostOf(target.target).toLowerCase() === name);
  if (byName !== undefined) return [byName];
  const hosts = hostOfLocation(finding);
  const byHost = targets.find((target) => hosts.includes(hostOf(target.target).toLowerCase()));
  if (byHost !== undefined) return [byHost];
  return targets.filter((target) => target.addresses.some((address) => hosts.includes(address)));
}

/**
 * Targets the scanner reports it never scanned (UnscannedHost), matched by
 * host name or checked address, and that yielded no finding (none counted
 * for them in `findingCounts`, by target id): skipped with the scanner's
 * reason, so that they close none of their risks.
 */
export function unscannedTargets(
  targets: readonly ResolvedTarget[],
  unscanned: readonly UnscannedHost[],
  findingCounts: ReadonlyMap<string, number>,
): SkippedTarget[] {
  const normalise = (host: string) => host.toLowerCase().replace(/\.$/, '');
  return targets.flatMap((target) => {
    if ((findingCounts.get(target.targetId) ?? 0) > 0) return [];
    const names = [normalise(hostOf(target.target)), ...target.addresses];
    const miss = unscanned.find((entry) => names.includes(normalise(entry.host)));
    return miss === undefined ? [] : [{ targetId: target.targetId, skippedReason: miss.reason }];
  });
}
