/**
 * What a parser produces from raw scanner output. Pure data: parsers never
 * touch the store, the clock or the network.
 */
export const SCAN_TYPES = ['NESSUS', 'NMAP', 'NMAP_UDP', 'NUCLEI', 'OPENVAS', 'OWASP_ZAP', 'OWASP_ZAP_ACTIVE', 'SSLYZE'] as const;
export type ScanType = (typeof SCAN_TYPES)[number];

/**
 * Vigil's severity scale. Every scanner's own severities map onto it (the
 * mapping lives next to each parser and is documented in the OpenAPI document).
 */
export const THREAT_LEVELS = ['CRITICAL', 'HIGH', 'MEDIUM', 'LOW', 'INFO'] as const;
export type ThreatLevel = (typeof THREAT_LEVELS)[number];

export interface RiskDefinition {
  scan_type: ScanType;
  title: string;
  threat_level: ThreatLevel;
  description: string;
  solution: string;
  /** CVSS base score as a decimal string ("9.8"), or a vector; "" when the scanner gives none. */
  cvss: string;
  /** Scanner-specific facts (CVEs, references, evidence, QoD, plugin ids...). JSON-serialisable. */
  additional_info: Record<string, unknown>;
}

/** Where a finding was observed, as the scanner reported it. */
export interface FindingLocation {
  /** IPv4/IPv6 address or host name the scanner reported; never empty. */
  host: string;
  /**
   * The name the scanner was asked to scan, when it reports one beside the
   * address (nmap's hostname type="user"): two targets sharing one address
   * are told apart by it.
   */
  hostname?: string;
  port?: number;
  protocol?: 'tcp' | 'udp';
  /** For web scanners: the URL of the site (scheme://host[:port]) the alert belongs to. */
  url?: string;
}

export interface Finding {
  /**
   * Stable identity of this finding on one target for one scan type
   * (DESIGN.md decision 7): the same weakness seen by two scans of the same
   * target yields the same fingerprint; it must not include volatile data
   * such as timestamps, evidence snippets or instance counts.
   */
  fingerprint: string;
  location: FindingLocation;
  definition: RiskDefinition;
}

/** The finding as a risk of a scan of `type`: a risk's scan type is its scan's, whatever type its parser gave its definition. */
export function asScanType(finding: Finding, type: ScanType): Finding {
  return finding.definition.scan_type === type ? finding : { ...finding, definition: { ...finding.definition, scan_type: type } };
}

/** Facts about a scanned host that belong on its Target (nmap OS match and hostname). */
export interface HostFacts {
  address: string;
  hostname?: string;
  os?: string;
}

/** A host the scanner was asked to scan but could not (a name it could not resolve, a server it could not reach). */
export interface UnscannedHost {
  /** The host name or address as the scanner reports it. */
  host: string;
  reason: string;
}

/**
 * Where a streaming parser hands its findings over as it goes, in bounded
 * batches, instead of holding every one until the end (an upload's findings
 * go to the store as they are parsed). A parser given one returns no
 * findings of its own in its ParseResult.
 */
export interface FindingSink {
  add(findings: readonly Finding[]): void;
}

export interface ParseResult {
  findings: Finding[];
  hosts: HostFacts[];
  /** Hosts the scanner reports it never scanned: their targets are skipped, so they close nothing. */
  unscanned?: UnscannedHost[];
}

/**
 * A push parser: bytes go in as they arrive (so a caller can enforce size
 * caps while streaming), findings come out at the end. Implementations throw
 * MalformedResultError with a sentence that says what is wrong.
 */
export interface ResultParser {
  write(chunk: Uint8Array): void;
  end(): ParseResult;
}
