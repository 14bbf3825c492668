import type { Finding, HostFacts, ParseResult } from '../../domain/risks/finding.js';
import { FindingBudget } from '../finding-bounds.js';

/**
 * Collects a file's findings and host facts. A Risk is one finding per target
 * per fingerprint (DESIGN.md decision 7), so a repeat of a fingerprint on the
 * same host is dropped: the first keeps the order the scanner reported in,
 * and any later copy would overwrite it with nothing new about the weakness.
 */
export class ParseResultBuilder {
  private readonly findings: Finding[] = [];
  private readonly seenFindings = new Set<string>();
  private readonly hosts = new Map<string, HostFacts>();
  private readonly budget = new FindingBudget();

  addFinding(finding: Finding): void {
    const key = `${finding.location.host}\u0000${finding.location.hostname ?? ''}\u0000${finding.fingerprint}`;
    if (this.seenFindings.has(key)) return;
    this.seenFindings.add(key);
    this.findings.push(this.budget.add(finding));
  }

  /** A host seen twice keeps its first facts and gains the ones it lacked. */
  addHost(facts: HostFacts): void {
    const known = this.hosts.get(facts.address);
    if (known === undefined) {
      this.hosts.set(facts.address, withoutEmptyFacts(facts));
      return;
    }
    this.hosts.set(facts.address, withoutEmptyFacts({ ...facts, ...withoutEmptyFacts(known) }));
  }

  result(): ParseResult {
    return { findings: [...this.findings], hosts: [...this.hosts.values()] };
  }
}

function withoutEmptyFacts(facts: HostFacts): HostFacts {
  const clean: HostFacts = { address: facts.address };
  if (facts.hostname) clean.hostname = facts.hostname;
  if (facts.os) clean.os = facts.os;
  return clean;
}
