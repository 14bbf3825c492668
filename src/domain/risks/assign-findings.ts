/**
 * Which of a scan's targets each finding belongs to. A scanner reports the
 * host it talked to (an address or a name, sometimes inside a URL); the
 * finding goes to the target whose host or resolved addresses match. With a
 * single target there is nothing to choose.
 */
import { hostOf } from '../scans/resolve-targets.js';
import type { ResolvedTarget } from '../scans/scan.js';
import type { Finding } from './finding.js';

function hostOfLocation(finding: Finding): string[] {
  const hosts = [finding.location.host];
  if (finding.location.url !== undefined && URL.canParse(finding.location.url)) hosts.push(new URL(finding.location.url).hostname);
  return hosts.map((host) => host.toLowerCase().replace(/\.$/, ''));
}

export function assignFindings(targets: readonly ResolvedTarget[], findings: readonly Finding[]): Map<string, Finding[]> {
  const byTarget = new Map<string, Finding[]>(targets.map((target) => [target.targetId, []]));
  for (const finding of findings) {
    const hosts = hostOfLocation(finding);
    const owner =
      targets.length === 1
        ? targets[0]
        : targets.find((target) => hosts.includes(hostOf(target.target).toLowerCase()) || target.addresses.some((address) => hosts.includes(address)));
    if (owner !== undefined) byTarget.get(owner.targetId)!.push(finding);
  }
  return byTarget;
}
