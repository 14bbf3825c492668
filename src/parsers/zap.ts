import { z } from 'zod';
import { MalformedResultError } from '../domain/errors.js';
import { FindingBudget, MAX_FINDINGS_PER_SCAN, tooManyFindings } from './finding-bounds.js';
import type { Finding, ResultParser, ParseResult, ThreatLevel } from '../domain/risks/finding.js';
import { JsonStream, type CompletedValue, type JsonStreamOptions } from './json/json-stream.js';
import { checkShape } from './json/shape-check.js';
import { cappedPlainText, htmlToPlainText, urlsInText } from './json/html-text.js';
import { capText, FindingMerger, mostSevere } from './json/merge-findings.js';

/**
 * Parser for ZAP's "Traditional JSON" report (zap-baseline/full/api-scan -J).
 *
 * One finding per (site, alert). Fingerprint: `zap:<pluginid>:<alert name slug>@<site origin>`.
 * - pluginid, not alertRef: alertRef exists only since ZAP 2.10, so keying on
 *   it would reopen every risk when a scanner image is upgraded.
 * - the alert name: one plugin raises several distinct alerts (10049 gives
 *   'Non-Storable Content' and 'Storable and Cacheable Content' on the same
 *   site, with alertRef '10049' for both in ZAP 2.12). The cost: when ZAP
 *   renames an alert, the old risk closes and a new one opens.
 * - the site origin: a URL target is often reported as an http and an https
 *   site; they are separate listeners whose headers and fixes differ, and the
 *   finding's location.url names one site, so identity follows it.
 * ZAP lists an alert again when it fires with another risk or confidence
 * (juice-shop: '.env Information Leak' Medium and Informational); those merge
 * into one finding with the higher risk and all instances.
 */
export type ZapScanType = 'OWASP_ZAP' | 'OWASP_ZAP_ACTIVE';

const FORMAT = 'ZAP Traditional JSON report';
const MAX_INSTANCES = 50;
const MAX_EVIDENCE_CHARS = 500;
const MAX_OTHER_INFO_CHARS = 4000;

/** ZAP's riskcode to Vigil's scale; ZAP has no 'critical'. */
const THREAT_LEVEL_BY_RISKCODE: readonly ThreatLevel[] = ['INFO', 'LOW', 'MEDIUM', 'HIGH'];
const CONFIDENCE_LABELS = ['False Positive', 'Low', 'Medium', 'High', 'Confirmed'] as const;

/** ZAP writes every scalar as a string ("riskcode": "2"); other generators write numbers. */
const integerText = z.union([z.number().int(), z.string().regex(/^\s*-?\d+\s*$/)], 'must be an integer').transform(Number);
const integerBetween = (min: number, max: number) => integerText.pipe(z.number().min(min, `must be ${min} to ${max}`).max(max, `must be ${min} to ${max}`));
const optionalText = z.string().optional();

const instanceSchema = z.object({
  uri: optionalText,
  method: optionalText,
  param: optionalText,
  evidence: optionalText,
});

const alertSchema = z.object({
  pluginid: z.union([z.string().min(1), z.number()]).transform(String),
  alertRef: optionalText,
  alert: optionalText,
  name: optionalText,
  riskcode: integerBetween(0, 3),
  confidence: integerBetween(0, 4).optional(),
  desc: optionalText,
  solution: optionalText,
  otherinfo: optionalText,
  reference: optionalText,
  cweid: integerText.optional(),
  wascid: integerText.optional(),
  count: integerText.optional(),
  instances: z.array(instanceSchema).optional(),
});

/** A site without its alerts: the alerts are checked one by one as they stream in, and taken out of the site. */
const siteHeaderSchema = z.object({
  '@name': z.string().min(1),
  '@host': optionalText,
  '@port': integerBetween(1, 65535).optional(),
  alerts: z.array(z.unknown()).optional(),
});

/** The document once its sites have been taken out. */
const reportSchema = z.object({ site: z.array(z.unknown()) });

type ZapSite = z.output<typeof siteHeaderSchema>;
type ZapAlert = z.output<typeof alertSchema>;

const EXPECTED = "an object with a 'site' array";
const SITE_HEADER_KEYS = new Set(['@name', '@host', '@port']);

/** What an alert contributes to its finding before the site it belongs to is known (ZAP writes the site's name first, but JSON does not promise it). */
interface AlertPart {
  pluginid: string;
  title: string;
  threat_level: ThreatLevel;
  description: string;
  solution: string;
  info: Record<string, unknown>;
}

/**
 * The report streams through JsonStream: each alert's bytes are delimited as
 * they arrive and parsed whole by JSON.parse (at most 16 MiB, the value cap),
 * then the alert is checked and turned into its finding and dropped from the
 * document, and each site, once complete, gives its findings their location
 * and is dropped too. What is held is the findings and the alert being read,
 * not the file. Everything else in the document is replaced by null once
 * read (keeping the keys that messages name). Errors are the ones checking
 * the whole document would give, in the same order: a shape error is kept
 * until the end, behind any syntax error; only the findings cap is refused at
 * once.
 */
export function createZapParser(scanType: ZapScanType, options: JsonStreamOptions = {}): ResultParser {
  const merger = new FindingMerger(mergeAlertFindings);
  let shapeError: MalformedResultError | undefined;
  let siteAlertError: MalformedResultError | undefined;
  let parts: AlertPart[] = [];

  const takeAlert = (path: PropertyKey[], value: unknown): void => {
    if (shapeError || siteAlertError) return;
    try {
      parts.push(alertPart(checkShape(value, alertSchema, { format: FORMAT, expected: EXPECTED, path })));
    } catch (error) {
      if (!(error instanceof MalformedResultError)) throw error;
      siteAlertError = error;
    }
  };

  const finishSite = (index: number, value: unknown): void => {
    const alertError = siteAlertError;
    const found = parts;
    siteAlertError = undefined;
    parts = [];
    if (shapeError) return;
    try {
      const site = checkShape(value, siteHeaderSchema, { format: FORMAT, expected: EXPECTED, path: ['site', index] });
      if (alertError) throw alertError;
      for (const part of found) {
        merger.add(siteFinding(scanType, part, site));
        if (merger.size > MAX_FINDINGS_PER_SCAN) throw tooManyFindings();
      }
    } catch (error) {
      if (!(error instanceof MalformedResultError) || error.message === tooManyFindings().message) throw error;
      shapeError = error;
    }
  };

  const stream = new JsonStream(
    FORMAT,
    options,
    (completed) => {
      const { depth, key, value } = completed;
      if (depth === 0) return;
      if (!isObject(completed.containerAt(0)) || completed.keyAt(1) !== 'site') return prune(completed);
      if (depth === 1) return Array.isArray(value) ? undefined : stub(completed);
      if (!Array.isArray(completed.containerAt(1))) return prune(completed);
      if (depth === 2) {
        finishSite(key as number, value);
        return prune(completed);
      }
      if (!isObject(completed.containerAt(2))) return prune(completed);
      if (depth === 3) {
        if (key === 'alerts') return Array.isArray(value) ? undefined : stub(completed);
        if (!SITE_HEADER_KEYS.has(key as string)) return prune(completed);
        return value !== null && typeof value === 'object' ? stub(completed) : undefined;
      }
      if (completed.keyAt(3) !== 'alerts' || !Array.isArray(completed.containerAt(3))) return prune(completed);
      // Depth 4 (the deepest reported: a value deeper stays in its depth-4 ancestor until that completes).
      takeAlert(['site', completed.keyAt(2)!, 'alerts', key!], value);
      (completed.parent as unknown[]).pop();
    },
    4,
  );

  return {
    write: (chunk) => stream.write(chunk),
    end: (): ParseResult => {
      checkShape(stream.end(), reportSchema, { format: FORMAT, expected: EXPECTED });
      if (shapeError) throw shapeError;
      return { findings: new FindingBudget().addAll(merger.findings()), hosts: [] };
    },
  };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** Drops a value nothing will read, keeping its key (messages list an object's keys) or its array slot. */
function prune(completed: CompletedValue): void {
  const { parent, key } = completed;
  if (parent !== null && typeof parent === 'object' && key !== undefined) (parent as Record<string | number, unknown>)[key] = null;
}

/** Replaces a value that only an error message will describe by a small one of the same kind ('an array', 'an object', 'a string'). */
function stub(completed: CompletedValue): void {
  const { parent, key, value } = completed;
  if (parent === null || typeof parent !== 'object' || key === undefined) return;
  const small = Array.isArray(value) ? (value.length === 0 ? [] : [null]) : isObject(value) ? {} : typeof value === 'string' ? '' : value;
  (parent as Record<string | number, unknown>)[key] = small;
}

function alertPart(alert: ZapAlert): AlertPart {
  // Alert names are plain text in ZAP, but a crafted file could carry markup there too.
  const title = htmlToPlainText(alert.alert ?? alert.name ?? '').replace(/\n/g, ' ') || `ZAP alert ${alert.pluginid}`;
  return {
    pluginid: alert.pluginid,
    title,
    threat_level: THREAT_LEVEL_BY_RISKCODE[alert.riskcode] ?? 'INFO',
    description: htmlToPlainText(alert.desc ?? ''),
    solution: htmlToPlainText(alert.solution ?? ''),
    info: alertAdditionalInfo(alert),
  };
}

function siteFinding(scanType: ZapScanType, part: AlertPart, site: ZapSite): Finding {
  return {
    fingerprint: `zap:${part.pluginid}:${slug(part.title)}@${siteOrigin(site['@name'])}`,
    location: siteLocation(site),
    definition: {
      scan_type: scanType,
      title: part.title,
      threat_level: part.threat_level,
      description: part.description,
      solution: part.solution,
      cvss: '',
      additional_info: { ...part.info, site: site['@name'] },
    },
  };
}

function alertAdditionalInfo(alert: ZapAlert): Record<string, unknown> {
  const instances = alert.instances ?? [];
  return {
    plugin_id: alert.pluginid,
    alert_ref: alert.alertRef ?? null,
    confidence: alert.confidence === undefined ? null : CONFIDENCE_LABELS[alert.confidence],
    cwe_id: positiveOrNull(alert.cweid),
    wasc_id: positiveOrNull(alert.wascid),
    references: urlsInText(htmlToPlainText(alert.reference ?? '')),
    other_info: cappedPlainText(alert.otherinfo ?? '', MAX_OTHER_INFO_CHARS, capText),
    // ZAP itself lists at most ~20 instances and reports the real total in `count`.
    instance_count: alert.count ?? instances.length,
    instances: instances.slice(0, MAX_INSTANCES).map(summarizeInstance),
  };
}

/**
 * Evidence is a literal snippet of the response (often markup) kept as data
 * for the reader, not rendered text; it is only shortened.
 */
function summarizeInstance(instance: z.output<typeof instanceSchema>): Record<string, string> {
  return {
    uri: instance.uri ?? '',
    method: instance.method ?? '',
    param: instance.param ?? '',
    evidence: capText(instance.evidence ?? '', MAX_EVIDENCE_CHARS),
  };
}

function mergeAlertFindings(kept: Finding, duplicate: Finding): Finding {
  const keptInfo = kept.definition.additional_info;
  const dupInfo = duplicate.definition.additional_info;
  const instances = [...asArray(keptInfo['instances']), ...asArray(dupInfo['instances'])];
  return {
    ...kept,
    definition: {
      ...kept.definition,
      threat_level: mostSevere(kept.definition.threat_level, duplicate.definition.threat_level),
      additional_info: {
        ...keptInfo,
        confidence: higherConfidence(keptInfo['confidence'], dupInfo['confidence']),
        instance_count: asNumber(keptInfo['instance_count']) + asNumber(dupInfo['instance_count']),
        instances: instances.slice(0, MAX_INSTANCES),
      },
    },
  };
}

function higherConfidence(a: unknown, b: unknown): unknown {
  const rank = (label: unknown) => CONFIDENCE_LABELS.findIndex((known) => known === label);
  return rank(b) > rank(a) ? b : a;
}

function siteLocation(site: ZapSite): Finding['location'] {
  const url = parseUrl(site['@name']);
  const host = site['@host']?.trim() || url?.hostname.replace(/^\[|\]$/g, '') || site['@name'];
  const port = site['@port'] ?? defaultPort(url);
  const location: Finding['location'] = { host, protocol: 'tcp' };
  if (port !== undefined) location.port = port;
  // Only a web origin becomes a URL: the dashboard links it, and a crafted file could name 'javascript:...'.
  if (url?.protocol === 'http:' || url?.protocol === 'https:') location.url = site['@name'].trim();
  return location;
}

/** scheme://host[:port] in canonical form, so 'https://Example.com:443' and 'https://example.com' are one site. */
function siteOrigin(name: string): string {
  const url = parseUrl(name);
  return url && url.origin !== 'null' ? url.origin : name.trim().toLowerCase();
}

function parseUrl(text: string): URL | undefined {
  try {
    return new URL(text);
  } catch {
    return undefined;
  }
}

function defaultPort(url: URL | undefined): number | undefined {
  if (!url) return undefined;
  if (url.port) return Number(url.port);
  return url.protocol === 'https:' ? 443 : url.protocol === 'http:' ? 80 : undefined;
}

function slug(text: string): string {
  return (
    text
      .toLowerCase()
      .replace(/[^\p{L}\p{N}]+/gu, '-')
      .replace(/^-+|-+$/g, '') || 'alert'
  );
}

function positiveOrNull(value: number | undefined): number | null {
  return value !== undefined && value > 0 ? value : null;
}

function asArray(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}

function asNumber(value: unknown): number {
  return typeof value === 'number' ? value : 0;
}
