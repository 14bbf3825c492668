import { z } from 'zod';
import { FindingBudget, MAX_FINDINGS_PER_SCAN, tooManyFindings } from './finding-bounds.js';
import type { Finding, FindingLocation, ParseResult, ResultParser, ThreatLevel } from '../domain/risks/finding.js';
import type { JsonInputOptions, JsonRecord } from './json/json-input.js';
import { JsonLinesStream } from './json/json-lines-stream.js';
import { checkShape } from './json/shape-check.js';
import { capStrings, FindingMerger, mostSevere } from './json/merge-findings.js';

/**
 * Parser for nuclei results: JSON Lines (`-jsonl`, v3 keys `template-id`,
 * `matcher-name`, `matched-at`; v2 keys `templateID`, `matcher_name`,
 * `matched`) and the single JSON array of `-json-export`. An empty file is a
 * scan that found nothing.
 *
 * Fingerprint: `nuclei:<template-id>:<matcher-name or ''>:<where it matched>`,
 * where "where" is matched-at as scheme://host[:port]/path (query and
 * fragment dropped: payloads and cache-busters live there), host[:port] for
 * network and ssl templates, the host alone for dns templates. It keeps /phpinfo.php apart from /info.php
 * and port 8080 apart from 9090 on one target, and stays the same from scan
 * to scan. Records that differ only in extracted results (tls-version once
 * per protocol, deprecated-tls) share it and are merged.
 *
 * `request`, `response`, `curl-command` and `interaction` are not kept: they
 * are raw traffic (up to ~100 KB per record in real files), the stored result
 * file already holds them, and responses may carry the target's secrets.
 */
const FORMAT = 'nuclei JSON Lines file';
const MAX_EXTRACTED_RESULTS = 20;
const MAX_EXTRACTED_CHARS = 500;

/** A Map, not an object literal: a crafted severity such as 'constructor' must not find a prototype property. */
const THREAT_LEVEL_BY_SEVERITY: ReadonlyMap<string, ThreatLevel> = new Map([
  ['critical', 'CRITICAL'],
  ['high', 'HIGH'],
  ['medium', 'MEDIUM'],
  ['low', 'LOW'],
  ['info', 'INFO'],
  ['unknown', 'INFO'],
]);

/** Structure is checked; leaf values vary between nuclei versions and templates and are read tolerantly. */
const loose = z.unknown().optional();
const classificationSchema = z.object({
  'cve-id': loose,
  'cwe-id': loose,
  'cvss-score': loose,
  'cvss-metrics': loose,
});

const infoSchema = z.object({
  name: loose,
  severity: loose,
  description: loose,
  remediation: loose,
  impact: loose,
  reference: loose,
  tags: loose,
  classification: classificationSchema.nullish(),
});

const recordSchema = z
  .object({
    'template-id': z.string().optional(),
    templateID: z.string().optional(),
    info: infoSchema.nullish(),
    'matcher-name': loose,
    matcher_name: loose,
    'matched-at': loose,
    matched: loose,
    'extracted-results': loose,
    extracted_results: loose,
    host: loose,
    ip: loose,
    port: loose,
    type: loose,
    url: loose,
    path: loose,
  })
  .refine((record) => Boolean(record['template-id'] || record.templateID), {
    message: "it has no 'template-id' (nor the nuclei v2 'templateID')",
  });

type NucleiRecord = z.output<typeof recordSchema>;
type NucleiInfo = z.output<typeof infoSchema>;
const NO_INFO: NucleiInfo = infoSchema.parse({});
const NO_CLASSIFICATION = classificationSchema.parse({});

/**
 * Records are read as their lines arrive (JsonLinesStream): each becomes its
 * finding and is dropped, so what is held is the findings, not the file. The
 * findings cap is refused as soon as it is passed.
 */
export function createNucleiParser(options: JsonInputOptions = {}): ResultParser {
  const merger = new FindingMerger(mergeMatches);
  const cap = tooManyFindings().message;
  const stream = new JsonLinesStream(
    FORMAT,
    options,
    (record) => {
      for (const finding of recordToFindings(record)) {
        merger.add(finding);
        if (merger.size > MAX_FINDINGS_PER_SCAN) throw tooManyFindings();
      }
    },
    (error) => error.message === cap,
  );
  return {
    write: (chunk) => stream.write(chunk),
    end: (): ParseResult => {
      stream.end();
      return { findings: new FindingBudget().addAll(merger.findings()), hosts: [] };
    },
  };
}

function recordToFindings({ where, value }: JsonRecord): Finding[] {
  const record = checkShape(value, recordSchema, { format: FORMAT, expected: 'a nuclei result object', where });
  const location = matchLocation(record);
  // A record naming no host at all (nuclei 3.x dns templates run against a bare
  // URL) cannot be tied to a Target, so it is left out rather than guessed.
  if (!location) return [];
  const templateId = record['template-id'] || record.templateID || '';
  const matcherName = text(record['matcher-name'] ?? record.matcher_name);
  const info = record.info ?? NO_INFO;
  return [
    {
      fingerprint: `nuclei:${templateId}:${matcherName}:${matchKey(location)}`,
      location: location.location,
      definition: {
        scan_type: 'NUCLEI',
        title: titleOf(info, templateId, matcherName),
        threat_level: THREAT_LEVEL_BY_SEVERITY.get(text(info.severity).toLowerCase()) ?? 'INFO',
        description: text(info.description),
        solution: text(info.remediation),
        cvss: cvssScore(info.classification?.['cvss-score']),
        additional_info: additionalInfo(record, info, templateId, matcherName),
      },
    },
  ];
}

function titleOf(info: NucleiInfo, templateId: string, matcherName: string): string {
  const name = text(info.name) || templateId || 'nuclei finding';
  return matcherName ? `${name} (${matcherName})` : name;
}

function additionalInfo(record: NucleiRecord, info: NucleiInfo, templateId: string, matcherName: string) {
  const extracted = stringList(record['extracted-results'] ?? record.extracted_results);
  const classification = info.classification ?? NO_CLASSIFICATION;
  return {
    template_id: templateId,
    matcher_name: matcherName || null,
    matched_at: text(record['matched-at'] ?? record.matched) || null,
    type: text(record.type) || null,
    ip: text(record.ip) || null,
    cves: cvesOf(templateId, classification['cve-id']),
    cwe: stringList(classification['cwe-id']).map((id) => id.toUpperCase()),
    cvss_metrics: text(classification['cvss-metrics']) || null,
    references: referencesOf(info.reference),
    tags: stringList(info.tags)
      .flatMap((tag) => tag.split(',').map((part) => part.trim()))
      .filter(Boolean),
    impact: text(info.impact) || null,
    extracted_results: capStrings(extracted, MAX_EXTRACTED_RESULTS, MAX_EXTRACTED_CHARS),
    extracted_results_total: extracted.length,
  };
}

function mergeMatches(kept: Finding, duplicate: Finding): Finding {
  const keptInfo = kept.definition.additional_info;
  const all = [...stringList(keptInfo['extracted_results']), ...stringList(duplicate.definition.additional_info['extracted_results'])];
  const unique = [...new Set(all)];
  return {
    ...kept,
    definition: {
      ...kept.definition,
      threat_level: mostSevere(kept.definition.threat_level, duplicate.definition.threat_level),
      additional_info: {
        ...keptInfo,
        extracted_results: unique.slice(0, MAX_EXTRACTED_RESULTS),
        extracted_results_total: unique.length,
      },
    },
  };
}

/** Where a record matched, parsed. Hosts are lower-case; IPv6 without brackets. */
interface Endpoint {
  scheme?: string;
  host: string;
  port?: number;
  path: string;
}

interface MatchLocation {
  location: FindingLocation;
  /** matched-at when the record has one, else the host it was run against. */
  matched: Endpoint;
}

function matchLocation(record: NucleiRecord): MatchLocation | undefined {
  const matched = parseEndpoint(text(record['matched-at'] ?? record.matched));
  const target = targetEndpoint(record) ?? matched;
  if (!target) return undefined;
  // DNS templates describe the name itself; a port or URL copied from the scan input would be noise.
  if (text(record.type) === 'dns') return { location: { host: target.host }, matched: { host: target.host, path: '' } };
  // The service that answered: matched-at when it is on the target host (network
  // templates report 'host:22' while `host` is the https URL they were given).
  const service = matched?.host === target.host ? matched : target;
  const port = validPort(record.port) ?? service.port ?? schemeDefaultPort(service.scheme);
  const location: FindingLocation = { host: target.host };
  if (port !== undefined) Object.assign(location, { port, protocol: 'tcp' });
  if (service.scheme === 'http' || service.scheme === 'https') location.url = originOf(service.scheme, service.host, port);
  return { location, matched: matched ?? target };
}

/** The host nuclei was pointed at; nuclei 3.x sometimes omits `host` and writes `url` as '/http://...'. */
function targetEndpoint(record: NucleiRecord): Endpoint | undefined {
  return (
    parseEndpoint(text(record.host)) ??
    parseEndpoint(text(record['matched-at'] ?? record.matched)) ??
    parseEndpoint(text(record.url).replace(/^\/+(?=[a-z][a-z0-9+.-]*:\/\/)/i, '')) ??
    parseEndpoint(text(record.path)) ??
    parseEndpoint(text(record.ip))
  );
}

/** Stable text for "where it matched"; see the fingerprint note at the top. */
function matchKey({ matched: endpoint }: MatchLocation): string {
  const hostPart = endpoint.host.includes(':') ? `[${endpoint.host}]` : endpoint.host;
  const portPart = endpoint.port && endpoint.port !== schemeDefaultPort(endpoint.scheme) ? `:${endpoint.port}` : '';
  const scheme = endpoint.scheme ? `${endpoint.scheme}://` : '';
  return `${scheme}${hostPart}${portPart}${endpoint.path}`;
}

function parseEndpoint(value: string): Endpoint | undefined {
  const trimmed = value.trim();
  if (!trimmed || /\s/.test(trimmed)) return undefined;
  return /^[a-z][a-z0-9+.-]*:\/\//i.test(trimmed) ? parseUrlEndpoint(trimmed) : parseHostPort(trimmed);
}

function parseUrlEndpoint(value: string): Endpoint | undefined {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return undefined;
  }
  const host = url.hostname.replace(/^\[|\]$/g, '').toLowerCase();
  if (!host) return undefined;
  const scheme = url.protocol.slice(0, -1).toLowerCase();
  return { scheme, host, ...(url.port ? { port: Number(url.port) } : {}), path: url.pathname };
}

/** 'host', 'host:22', '[::1]:443', '::1', optionally followed by '/path'. */
function parseHostPort(value: string): Endpoint | undefined {
  const slash = value.search(/[/?#]/);
  const authority = slash === -1 ? value : value.slice(0, slash);
  const path = slash === -1 ? '' : value.slice(slash).replace(/[?#].*$/, '');
  const bracketed = /^\[([^\]]+)\](?::(\d+))?$/.exec(authority);
  const hostAndPort = /^([^:]+):(\d+)$/.exec(authority);
  const [host, port] = bracketed ? [bracketed[1], bracketed[2]] : hostAndPort ? [hostAndPort[1], hostAndPort[2]] : [authority, undefined];
  if (!host) return undefined;
  const portNumber = validPort(port);
  return { host: host.toLowerCase(), ...(portNumber ? { port: portNumber } : {}), path };
}

function validPort(value: unknown): number | undefined {
  const port = typeof value === 'number' ? value : typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : NaN;
  return Number.isInteger(port) && port >= 1 && port <= 65535 ? port : undefined;
}

function schemeDefaultPort(scheme: string | undefined): number | undefined {
  return scheme === 'https' ? 443 : scheme === 'http' ? 80 : undefined;
}

function originOf(scheme: string, host: string, port: number | undefined): string {
  const hostPart = host.includes(':') ? `[${host}]` : host;
  const portPart = port && port !== schemeDefaultPort(scheme) ? `:${port}` : '';
  return `${scheme}://${hostPart}${portPart}`;
}

function cvesOf(templateId: string, classified: unknown): string[] {
  const cves = stringList(classified).map((cve) => cve.toUpperCase());
  // CVE templates are named after their CVE but older ones carry no classification.
  if (/^CVE-\d{4}-\d{4,}$/i.test(templateId)) cves.push(templateId.toUpperCase());
  return [...new Set(cves)];
}

/** Reference lists are arrays in v3 and a '- url' YAML-ish string or single URL in v2. */
function referencesOf(reference: unknown): string[] {
  const entries = stringList(reference).flatMap((entry) => entry.split('\n'));
  const cleaned = entries.map((entry) => entry.replace(/^\s*-\s*/, '').trim()).filter(Boolean);
  return [...new Set(cleaned)];
}

function cvssScore(value: unknown): string {
  const score = typeof value === 'number' ? value : typeof value === 'string' ? Number(value) : NaN;
  return Number.isFinite(score) && score >= 0 && score <= 10 && value !== '' ? score.toFixed(1) : '';
}

function text(value: unknown): string {
  return typeof value === 'string' ? value.trim() : typeof value === 'number' ? String(value) : '';
}

/** A string, an array of strings or null, as a list of non-empty strings. */
function stringList(value: unknown): string[] {
  const items = Array.isArray(value) ? value : [value];
  return items.filter((item): item is string => typeof item === 'string' && item.trim() !== '').map((item) => item.trim());
}
