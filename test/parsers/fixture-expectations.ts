/**
 * Shared by the parser tests: every real scanner file in test/fixtures/<format>
 * is parsed and compared with the `<file>.expected.json` written beside it
 * (counts and hand-checked samples read from the XML, not from parser output).
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'chai';
import type { Finding, HostFacts, ParseResult, ResultParser } from '../../src/domain/risks/finding.js';

export const FIXTURES_DIR = new URL('../fixtures/', import.meta.url).pathname;

export interface ExpectedSample {
  fingerprint: string;
  location: Finding['location'];
  title: string;
  threat_level: string;
  cvss: string;
  /** Keys that must be present in additional_info with these values (other keys may exist). */
  additional_info?: Record<string, unknown>;
  cve_count?: number;
}

export interface ExpectedFindings {
  findings: number;
  by_threat_level: Record<string, number>;
  hosts: number;
  samples: ExpectedSample[];
  host_samples?: HostFacts[];
  note?: string;
}

/** Scanner files of one format, without their .expected.json companions (nor directories such as nmap/expected/). */
export function fixtureFiles(format: string): string[] {
  return readdirSync(join(FIXTURES_DIR, format))
    .filter((name) => !name.endsWith('.expected.json') && statSync(join(FIXTURES_DIR, format, name)).isFile())
    .sort();
}

export function readFixture(format: string, name: string): Buffer {
  return readFileSync(join(FIXTURES_DIR, format, name));
}

export function readExpected(format: string, name: string): ExpectedFindings {
  return JSON.parse(readFileSync(join(FIXTURES_DIR, format, `${name}.expected.json`), 'utf8')) as ExpectedFindings;
}

export function parseWhole(parser: ResultParser, bytes: Uint8Array): ParseResult {
  parser.write(bytes);
  return parser.end();
}

export function countByThreatLevel(findings: Finding[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const finding of findings) counts[finding.definition.threat_level] = (counts[finding.definition.threat_level] ?? 0) + 1;
  return counts;
}

export function expectMatchesExpected(result: ParseResult, expected: ExpectedFindings): void {
  expect(result.findings, 'number of findings').to.have.length(expected.findings);
  expect(countByThreatLevel(result.findings), 'findings by threat level').to.deep.equal(expected.by_threat_level);
  expect(result.hosts, 'number of HostFacts').to.have.length(expected.hosts);
  for (const sample of expected.samples) expectSample(result.findings, sample);
  for (const host of expected.host_samples ?? []) {
    expect(
      result.hosts.find((facts) => facts.address === host.address),
      `HostFacts of ${host.address}`,
    ).to.deep.equal(host);
  }
  for (const finding of result.findings) {
    expect(finding.definition.title.trim(), `title of ${finding.fingerprint}`).not.to.equal('');
    expect(finding.location.host.trim(), `host of ${finding.fingerprint}`).not.to.equal('');
  }
}

function expectSample(findings: Finding[], sample: ExpectedSample): void {
  const found = findings.find((f) => f.fingerprint === sample.fingerprint && f.location.host === sample.location.host);
  expect(found, `finding ${sample.fingerprint} on ${sample.location.host}`).not.to.equal(undefined);
  if (found === undefined) return;
  const { definition } = found;
  expect(found.location).to.deep.equal(sample.location);
  expect({ title: definition.title, threat_level: definition.threat_level, cvss: definition.cvss }).to.deep.equal({
    title: sample.title,
    threat_level: sample.threat_level,
    cvss: sample.cvss,
  });
  for (const [key, value] of Object.entries(sample.additional_info ?? {})) {
    expect(definition.additional_info[key], `additional_info.${key} of ${sample.fingerprint}`).to.deep.equal(value);
  }
  if (sample.cve_count !== undefined) expect(definition.additional_info.cves).to.have.length(sample.cve_count);
}
