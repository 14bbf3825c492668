/**
 * The Targets an uploaded scanner file names (SPEC.md, Imported results):
 * each host's address, or its name when that is all the file has, held to
 * the same rules as any Target. A host that fails them is skipped and
 * reported, not imported: the file documents a scan the customer already
 * ran, so the public hosts in it are still worth recording.
 */
import { InvalidRequestError } from '../errors.js';
import type { Finding, HostFacts } from '../risks/finding.js';
import type { Cidr } from '../targets/ipv4.js';
import { parseTargetAddress } from '../targets/target-address.js';

/** Longer facts are cut: they come from an untrusted file and only label the target. */
const MAX_FACT_LENGTH = 255;
const MAX_REPORTED_HOST_LENGTH = 255;

export interface InferredTarget {
  /** The normalised target address. */
  target: string;
  /** The host strings of the file that name this target; findings are matched on them. */
  hosts: string[];
  os?: string;
  hostname?: string;
}

export interface SkippedHost {
  host: string;
  reason: string;
}

export interface InferredTargets {
  targets: InferredTarget[];
  skipped: SkippedHost[];
}

export function inferTargets(hosts: readonly HostFacts[], allow: readonly Cidr[]): InferredTargets {
  const byTarget = new Map<string, InferredTarget>();
  const skipped: SkippedHost[] = [];
  for (const facts of hosts) {
    const target = targetOf(facts.address, allow);
    if (typeof target !== 'string') {
      skipped.push({ host: cut(facts.address, MAX_REPORTED_HOST_LENGTH), reason: target.reason });
      continue;
    }
    const known = byTarget.get(target);
    if (known === undefined) byTarget.set(target, { target, hosts: [facts.address], ...factsOf(facts) });
    else known.hosts.push(facts.address);
  }
  return { targets: [...byTarget.values()], skipped };
}

/** The web scanner's target, given by the uploader: every finding of the report belongs to it. */
export function givenTarget(input: string, allow: readonly Cidr[]): InferredTarget {
  return { target: parseTargetAddress(input, allow).value, hosts: [] };
}

function targetOf(address: string, allow: readonly Cidr[]): string | { reason: string } {
  try {
    return parseTargetAddress(address, allow).value;
  } catch (error) {
    if (error instanceof InvalidRequestError) return { reason: error.message };
    throw error;
  }
}

function factsOf(facts: HostFacts): Pick<InferredTarget, 'os' | 'hostname'> {
  return {
    ...(facts.os === undefined ? {} : { os: cut(facts.os, MAX_FACT_LENGTH) }),
    ...(facts.hostname === undefined ? {} : { hostname: cut(facts.hostname, MAX_FACT_LENGTH) }),
  };
}

/**
 * The findings of each inferred target, keyed by its address. A finding
 * belongs to the target whose file host it was reported on; findings on
 * skipped hosts belong to none. With a web scanner's single given target,
 * every finding is its own (as for a scan with one target).
 */
export function findingsByTarget(targets: readonly InferredTarget[], findings: readonly Finding[]): Map<string, Finding[]> {
  const byTarget = new Map<string, Finding[]>(targets.map((target) => [target.target, []]));
  const single = targets.length === 1 && targets[0]!.hosts.length === 0 ? targets[0] : undefined;
  const ownerOfHost = new Map(targets.flatMap((target) => target.hosts.map((host) => [host, target.target] as const)));
  for (const finding of findings) {
    const owner = single?.target ?? ownerOfHost.get(finding.location.host);
    if (owner !== undefined) byTarget.get(owner)!.push(finding);
  }
  return byTarget;
}

function cut(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 3)}...` : text;
}
