import type { Finding, FindingSink, HostFacts, ParseResult } from '../../domain/risks/finding.js';
import { FindingBudget } from '../finding-bounds.js';

/**
 * Collects a file's findings and host facts. A Risk is one finding per target
 * per fingerprint (DESIGN.md decision 7), so a repeat of a fingerprint on the
 * same host is dropped: the first keeps the order the scanner reported in,
 * and any later copy would overwrite it with nothing new about the weakness.
 * With a sink, the findings go to it SINK_BATCH at a time as they are added
 * and the result holds none (an upload's findings go to the store as they
 * are parsed; only the keys that drop repeats are kept).
 */
export class ParseResultBuilder {
  private findings: Finding[] = [];
  /** The fingerprints seen per target (host and hostname), the one last added to at hand: a parser adds a host's findings together. */
  private readonly seenFindings = new Map<string, Set<string>>();
  private lastHost: string | undefined;
  private lastHostname: string | undefined;
  private lastSeen: Set<string> | undefined;
  private readonly hosts = new Map<string, HostFacts>();
  constructor(
    private readonly sink?: FindingSink,
    private readonly budget = new FindingBudget(),
  ) {}

  /** `plainText`: see FindingBudget.add. */
  addFinding(finding: Finding, plainText = false): void {
    const seen = this.seenOn(finding.location.host, finding.location.hostname);
    if (seen.has(finding.fingerprint)) return;
    seen.add(ownCopy(finding.fingerprint));
    this.findings.push(this.budget.add(finding, plainText));
    if (this.sink !== undefined && this.findings.length >= SINK_BATCH) this.flush();
  }

  private seenOn(host: string, hostname: string | undefined): Set<string> {
    if (this.lastSeen !== undefined && host === this.lastHost && hostname === this.lastHostname) return this.lastSeen;
    // XML cannot hold U+0000, so it cannot be part of a host or a hostname.
    const key = ownCopy(`${host}\u0000${hostname ?? ''}`);
    let seen = this.seenFindings.get(key);
    if (seen === undefined) this.seenFindings.set(key, (seen = new Set()));
    this.lastHost = host;
    this.lastHostname = hostname;
    this.lastSeen = seen;
    return seen;
  }

  /** A host seen twice keeps its first facts and gains the ones it lacked. */
  addHost(facts: HostFacts): void {
    facts = { ...facts, address: ownCopy(facts.address) };
    if (facts.hostname !== undefined) facts.hostname = ownCopy(facts.hostname);
    if (facts.os !== undefined) facts.os = ownCopy(facts.os);
    const known = this.hosts.get(facts.address);
    if (known === undefined) {
      this.hosts.set(facts.address, withoutEmptyFacts(facts));
      return;
    }
    this.hosts.set(facts.address, withoutEmptyFacts({ ...facts, ...withoutEmptyFacts(known) }));
  }

  result(): ParseResult {
    if (this.sink !== undefined) this.flush();
    return { findings: [...this.findings], hosts: [...this.hosts.values()] };
  }

  private flush(): void {
    if (this.findings.length === 0) return;
    const batch = this.findings;
    this.findings = [];
    this.sink!.add(batch);
  }
}

/**
 * The same text in a string of its own, for what is kept until the end of
 * the file (the keys that drop repeats, the host facts). A parser's strings
 * are slices of the text saxes read them from (V8 makes a slice of 13
 * characters or more point into its source, and a concatenation point to
 * its parts), so one fingerprint kept from each 256 KiB piece of a file kept
 * every piece alive: 15-20 MB of a 25 MB nmap report's parse peak
 * (bench/ingest.ts). Slicing a concatenation makes V8 copy it flat first,
 * the cheapest copy it offers (a Buffer round trip cost twice as much).
 * test/parsers/nmap-retention-child.ts measures it.
 */
function ownCopy(text: string): string {
  return text.length < 13 ? text : ` ${text}`.slice(1);
}

/** Findings handed to a sink at once: a few hundred KB of them. */
export const SINK_BATCH = 100;

function withoutEmptyFacts(facts: HostFacts): HostFacts {
  const clean: HostFacts = { address: facts.address };
  if (facts.hostname) clean.hostname = facts.hostname;
  if (facts.os) clean.os = facts.os;
  return clean;
}
