/**
 * OpenVAS / Greenbone (GVM) XML reports: the old OMP export (OpenVAS 6/7:
 * `threat`, `nvt/risk_factor`, `nvt/cve`, no severity or QoD) and the current
 * GMP one (`severity`, `qod`, `nvt/refs`, `nvt/severities`, `nvt/solution`).
 *
 * Decisions:
 * - One finding per top-level <result> of <report><results>; results nested in
 *   <detection> only point at the result that detected a product.
 * - Log results are kept as INFO: GVM lists them (open ports, detected
 *   products, OS), and they are what a later scan closes when a service goes away.
 * - False Positive, Debug and Error results are dropped (negative GVM
 *   severities): they describe the scanner or an override, not the target.
 * - The numeric severity ranks a result (CVSS qualitative scale); the <threat>
 *   word is the fallback for old exports without one.
 */
import type { Finding, FindingSink, ResultParser, ThreatLevel } from '../domain/risks/finding.js';
import { parseCvssScore, threatLevelFromCvssScore } from './xml/cvss.js';
import { ParseResultBuilder } from './xml/parse-result-builder.js';
import { joinSections, normaliseText, normaliseTitle } from './xml/plain-text.js';
import { createSafeXmlReader, pathEndsWith, relativePath, type XmlElement, type XmlHandlers } from './xml/safe-xml.js';

/** Child elements of a <result> whose text the parser reads, by path below <result>. */
const RESULT_TEXTS = new Set([
  'host',
  'host/hostname',
  'port',
  'name',
  'nvt/name',
  'nvt/family',
  'nvt/cvss_base',
  'nvt/tags',
  'nvt/solution',
  'nvt/cve',
  'nvt/xref',
  'nvt/severities/severity/value',
  'threat',
  'severity',
  'qod/value',
  'qod/type',
  'description',
]);

interface OpenVasResult {
  /** Depth of the <result> element, so that its children are matched by relative path. */
  depth: number;
  texts: Map<string, string>;
  nvtOid: string;
  solutionType: string;
  refs: Array<{ type: string; id: string }>;
}

interface OpenVasHost {
  depth: number;
  ip: string;
  detailName: string;
  details: Map<string, string>;
}

export function createOpenVasParser(findings?: FindingSink): ResultParser {
  const builder = new ParseResultBuilder(findings);
  const reader = createSafeXmlReader(
    {
      expected: 'an OpenVAS/Greenbone XML report',
      // <get_reports_response> is what `gvm-cli` prints around the report.
      rootElements: ['report', 'get_reports_response'],
    },
    new OpenVasDocumentHandlers(builder),
  );
  return {
    write: (chunk) => reader.write(chunk),
    end: () => {
      reader.end();
      return builder.result();
    },
  };
}

class OpenVasDocumentHandlers implements XmlHandlers {
  private result: OpenVasResult | undefined;
  private host: OpenVasHost | undefined;

  constructor(private readonly builder: ParseResultBuilder) {}

  open({ path, attributes }: XmlElement): void {
    if (this.result === undefined && pathEndsWith(path, 'report', 'results', 'result')) {
      this.result = { depth: path.length - 1, texts: new Map(), nvtOid: '', solutionType: '', refs: [] };
      return;
    }
    if (this.result === undefined && this.host === undefined && pathEndsWith(path, 'report', 'host')) {
      this.host = { depth: path.length - 1, ip: '', detailName: '', details: new Map() };
      return;
    }
    if (this.result !== undefined) readResultAttributes(this.result, relativePath(path, this.result.depth), attributes);
  }

  close({ path }: XmlElement, text: string): void {
    if (this.result !== undefined) this.closeInResult(path, text, this.result);
    else if (this.host !== undefined) this.closeInHost(path, text, this.host);
  }

  private closeInResult(path: readonly string[], text: string, result: OpenVasResult): void {
    if (path.length - 1 === result.depth) {
      addOpenVasResult(result, this.builder);
      this.result = undefined;
      return;
    }
    const where = relativePath(path, result.depth);
    // The first occurrence wins: GMP lists the CVSS v3 severity before older ones.
    if (RESULT_TEXTS.has(where) && !result.texts.has(where)) result.texts.set(where, text);
  }

  private closeInHost(path: readonly string[], text: string, host: OpenVasHost): void {
    const where = relativePath(path, host.depth);
    if (where === 'ip') host.ip = text.trim();
    if (where === 'detail/name') host.detailName = text.trim();
    if (where === 'detail/value' && !host.details.has(host.detailName)) host.details.set(host.detailName, text.trim());
    if (path.length - 1 !== host.depth) return;
    const os = host.details.get('best_os_txt');
    const hostname = host.details.get('hostname');
    if (host.ip !== '') this.builder.addHost({ address: host.ip, ...(hostname && { hostname }), ...(os && { os }) });
    this.host = undefined;
  }
}

function readResultAttributes(result: OpenVasResult, where: string, attributes: Readonly<Record<string, string>>): void {
  if (where === 'nvt') result.nvtOid = (attributes.oid ?? '').trim();
  if (where === 'nvt/solution') result.solutionType = attributes.type ?? '';
  if (where === 'nvt/refs/ref') result.refs.push({ type: (attributes.type ?? '').toLowerCase(), id: attributes.id ?? '' });
  if (where === 'nvt/cert/cert_ref') result.refs.push({ type: (attributes.type ?? '').toLowerCase(), id: attributes.id ?? '' });
}

function addOpenVasResult(result: OpenVasResult, builder: ParseResultBuilder): void {
  const text = (where: string): string => result.texts.get(where) ?? '';
  const address = normaliseTitle(text('host')) || normaliseTitle(text('host/hostname'));
  const threatLevel = openVasThreatLevel(text('severity'), text('threat'));
  if (address === '' || threatLevel === undefined) return;
  const hostname = normaliseTitle(text('host/hostname'));
  builder.addHost({ address, ...(hostname && { hostname }) });
  builder.addFinding(openVasFinding(result, address, threatLevel));
}

/** undefined: the result is not a finding on the target (false positive, debug or error message). */
export function openVasThreatLevel(severityText: string, threatText: string): ThreatLevel | undefined {
  const threat = threatText.trim().toLowerCase();
  if (threat === 'false positive' || threat === 'debug' || threat === 'error') return undefined;
  const severity = Number.parseFloat(severityText);
  if (Number.isFinite(severity)) return severity < 0 ? undefined : threatLevelFromCvssScore(severity);
  const byThreat: Record<string, ThreatLevel> = {
    critical: 'CRITICAL',
    high: 'HIGH',
    medium: 'MEDIUM',
    low: 'LOW',
    log: 'INFO',
  };
  return byThreat[threat] ?? 'INFO';
}

interface OpenVasPort {
  /** "443/tcp", "general/tcp", "general/CPE-T": the service part of old "https (443/tcp)" dropped. */
  key: string;
  port?: number;
  protocol?: 'tcp' | 'udp';
}

export function parseOpenVasPort(reported: string): OpenVasPort {
  const trimmed = normaliseTitle(reported);
  const key = /\((\d+\/[a-z]+)\)$/i.exec(trimmed)?.[1] ?? (trimmed || 'general');
  const numbered = /^(\d+)\/(tcp|udp)$/i.exec(key);
  if (numbered?.[1] !== undefined && numbered[2] !== undefined) {
    return { key, port: Number(numbered[1]), protocol: numbered[2].toLowerCase() as 'tcp' | 'udp' };
  }
  const general = /^general\/(tcp|udp)$/i.exec(key)?.[1];
  return general === undefined ? { key } : { key, protocol: general.toLowerCase() as 'tcp' | 'udp' };
}

function openVasFinding(result: OpenVasResult, address: string, threatLevel: ThreatLevel): Finding {
  const text = (where: string): string => result.texts.get(where) ?? '';
  const port = parseOpenVasPort(text('port'));
  const tags = parseNvtTags(text('nvt/tags'));
  const title = normaliseTitle(text('nvt/name')) || normaliseTitle(text('name')) || `OpenVAS NVT ${result.nvtOid || 'without an OID'}`;
  const location = { host: address, ...(port.port !== undefined && { port: port.port }), ...(port.protocol && { protocol: port.protocol }) };
  return {
    // Old exports name the NVT by OID too; the name is the fallback for hand-made files.
    fingerprint: `openvas:${result.nvtOid || `name:${title}`}:${port.key}`,
    location,
    definition: {
      scan_type: 'OPENVAS',
      title,
      threat_level: threatLevel,
      description: openVasDescription(text('description'), tags) || title,
      solution: normaliseText(text('nvt/solution') || (tags.get('solution') ?? '')),
      cvss: openVasCvss(text('severity'), text('nvt/cvss_base')),
      additional_info: openVasInfo(result, port, tags),
    },
  };
}

function openVasDescription(detectionResult: string, tags: Map<string, string>): string {
  return joinSections([
    ['', tags.get('summary')],
    ['Detection result', detectionResult],
    ['Insight', tags.get('insight')],
    ['Affected', tags.get('affected')],
    ['Impact', tags.get('impact')],
    ['Detection method', tags.get('vuldetect')],
  ]);
}

/** GVM's severity is the CVSS base score it ranks by (after overrides); old exports only have the NVT's. */
function openVasCvss(severity: string, nvtCvssBase: string): string {
  const fromSeverity = parseCvssScore(severity);
  if (fromSeverity !== undefined) return severity.trim();
  return parseCvssScore(nvtCvssBase) === undefined ? '' : nvtCvssBase.trim();
}

/** NVT tags are `key=value` pairs separated by '|': "summary=...|insight=...|solution_type=VendorFix". */
function parseNvtTags(tags: string): Map<string, string> {
  const parsed = new Map<string, string>();
  for (const pair of tags.split('|')) {
    const separator = pair.indexOf('=');
    if (separator > 0) parsed.set(pair.slice(0, separator).trim(), pair.slice(separator + 1));
  }
  return parsed;
}

function openVasInfo(result: OpenVasResult, port: OpenVasPort, tags: Map<string, string>): Record<string, unknown> {
  const text = (where: string): string => normaliseTitle(result.texts.get(where) ?? '');
  const info: Record<string, unknown> = { nvt_oid: result.nvtOid, port: text('port') || port.key };
  const qod = Number.parseFloat(text('qod/value'));
  if (Number.isFinite(qod)) info.qod = qod;
  const optional: Record<string, string> = {
    qod_type: text('qod/type'),
    nvt_family: text('nvt/family'),
    threat: text('threat'),
    hostname: text('host/hostname'),
    cvss_vector: text('nvt/severities/severity/value') || normaliseTitle(tags.get('cvss_base_vector') ?? ''),
    solution_type: result.solutionType || normaliseTitle(tags.get('solution_type') ?? ''),
  };
  for (const [key, value] of Object.entries(optional)) if (value !== '') info[key] = value;
  const severity = parseCvssScore(text('severity'));
  if (severity !== undefined) info.severity = severity;
  info.cves = openVasCves(result);
  info.references = openVasReferences(result);
  const advisories = result.refs.filter((ref) => ref.type === 'cert-bund' || ref.type === 'dfn-cert').map((ref) => ref.id);
  if (advisories.length > 0) info.advisories = advisories;
  return info;
}

function openVasCves(result: OpenVasResult): string[] {
  const fromRefs = result.refs.filter((ref) => ref.type === 'cve').map((ref) => ref.id.trim());
  // Old exports: "CVE-2010-0020, CVE-2010-0021" or "NOCVE".
  const fromOldList = (result.texts.get('nvt/cve') ?? '').split(/[\s,]+/);
  return unique([...fromRefs, ...fromOldList].filter((id) => /^CVE-\d{4}-\d+$/i.test(id)).map((id) => id.toUpperCase()));
}

function openVasReferences(result: OpenVasResult): string[] {
  const fromRefs = result.refs.filter((ref) => ref.type === 'url').map((ref) => ref.id.trim());
  // Old exports: "URL:http://a, URL:http://b" or "NOXREF".
  const fromOldList = (result.texts.get('nvt/xref') ?? '')
    .split(/,\s*/)
    .filter((ref) => /^URL:/i.test(ref.trim()))
    .map((ref) => ref.trim().slice('URL:'.length));
  return unique([...fromRefs, ...fromOldList].filter((url) => url !== ''));
}

function unique(values: string[]): string[] {
  return [...new Set(values)];
}
