/**
 * Nessus v2 XML (`.nessus`, root <NessusClientData_v2>), Tenable WAS exports
 * in the same envelope included.
 *
 * Decisions:
 * - One finding per ReportItem, severity 0 ("None") items kept as INFO: they
 *   are the inventory (services, software, certificates) a later scan closes
 *   when it changes.
 * - The CVSS v3 base score, when present, ranks the item (CVSS qualitative
 *   scale) over Nessus' own severity, which older plugins derive from CVSS v2.
 * - Compliance checks share one plugin id per audit file, so their check id
 *   joins the fingerprint; otherwise every check would merge into one Risk.
 */
import type { Finding, FindingLocation, FindingSink, HostFacts, ResultParser, ThreatLevel } from '../domain/risks/finding.js';
import { MalformedResultError } from '../domain/errors.js';
import { parseCvssScore, threatLevelFromCvssScore } from './xml/cvss.js';
import { ParseResultBuilder } from './xml/parse-result-builder.js';
import { joinSections, normaliseText, normaliseTitle, truncateText } from './xml/plain-text.js';
import { createSafeXmlReader, type XmlElement, type XmlHandlers } from './xml/safe-xml.js';

/** Plugin output can be megabytes (full file listings); a Risk keeps the first 8 KiB. */
const MAX_PLUGIN_OUTPUT_CHARS = 8 * 1024;

const HOST_PATH = 'NessusClientData_v2/Report/ReportHost';
const ITEM_PATH = `${HOST_PATH}/ReportItem`;

/** ReportItem children the parser reads; WAS exports name the scores `cvss` and `cvssv3`. */
const ITEM_TEXTS = new Set([
  'plugin_name',
  'synopsis',
  'description',
  'solution',
  'plugin_output',
  'see_also',
  'risk_factor',
  'cvss3_base_score',
  'cvssv3',
  'cvss_base_score',
  'cvss',
  'cvss3_vector',
  'cvss_vector',
  'plugin_type',
  'exploit_available',
  'cm:compliance-check-id',
  'cm:compliance-check-name',
]);
const ITEM_LISTS = new Set(['cve', 'xref']);

interface NessusItem {
  attributes: Readonly<Record<string, string>>;
  texts: Map<string, string>;
  lists: Map<string, string[]>;
}

interface NessusHost {
  name: string;
  tags: Map<string, string>;
  items: NessusItem[];
}

export function createNessusParser(findings?: FindingSink): ResultParser {
  const builder = new ParseResultBuilder(findings);
  const reader = createSafeXmlReader(
    { expected: 'a Nessus v2 report (.nessus)', rootElements: ['NessusClientData_v2'] },
    new NessusDocumentHandlers((host) => addNessusHost(host, builder)),
  );
  return {
    write: (chunk) => reader.write(chunk),
    end: () => {
      reader.end();
      return builder.result();
    },
  };
}

/** Collects one NessusHost per <ReportHost>, handed over when it closes (HostProperties may follow the items). */
class NessusDocumentHandlers implements XmlHandlers {
  private host: NessusHost | undefined;
  private item: NessusItem | undefined;

  constructor(private readonly onHost: (host: NessusHost) => void) {}

  open({ path, attributes }: XmlElement): void {
    const where = path.join('/');
    if (where === HOST_PATH) this.host = { name: (attributes.name ?? '').trim(), tags: new Map(), items: [] };
    if (where === ITEM_PATH) this.item = { attributes, texts: new Map(), lists: new Map() };
  }

  close({ path, attributes }: XmlElement, text: string): void {
    const where = path.join('/');
    if (where === `${HOST_PATH}/HostProperties/tag`) this.host?.tags.set(attributes.name ?? '', text.trim());
    if (path.length === 5 && where.startsWith(`${ITEM_PATH}/`)) this.keepItemText(path[4] ?? '', text);
    if (where === ITEM_PATH && this.item !== undefined) {
      this.host?.items.push(this.item);
      this.item = undefined;
    }
    if (where === HOST_PATH && this.host !== undefined) {
      this.onHost(this.host);
      this.host = undefined;
    }
  }

  private keepItemText(name: string, text: string): void {
    const item = this.item;
    if (item === undefined) return;
    if (ITEM_TEXTS.has(name)) item.texts.set(name, text);
    if (ITEM_LISTS.has(name)) item.lists.set(name, [...(item.lists.get(name) ?? []), text.trim()]);
  }
}

function addNessusHost(host: NessusHost, builder: ParseResultBuilder): void {
  const location = nessusHostLocation(host);
  if (location === undefined) {
    throw new MalformedResultError('The Nessus report has a ReportHost without a name, address or FQDN.');
  }
  builder.addHost(nessusHostFacts(host, location.host));
  for (const item of host.items) builder.addFinding(nessusFinding(item, location));
}

/** host-ip names the scanned machine; WAS exports only have a URL, whose host name is used. */
function nessusHostLocation(host: NessusHost): Pick<FindingLocation, 'host' | 'url'> | undefined {
  const reported = host.tags.get('host-ip') || host.tags.get('host-fqdn') || host.name;
  if (reported === '') return undefined;
  const url = parseUrl(reported);
  return url === undefined ? { host: reported } : { host: url.hostname.replace(/^\[|\]$/g, ''), url: url.origin };
}

function parseUrl(text: string): URL | undefined {
  if (!/^[a-z][a-z0-9+.-]*:\/\//i.test(text)) return undefined;
  try {
    const url = new URL(text);
    return url.hostname === '' ? undefined : url;
  } catch {
    return undefined;
  }
}

function nessusHostFacts(host: NessusHost, address: string): HostFacts {
  const facts: HostFacts = { address };
  const fqdn = host.tags.get('host-fqdn') ?? '';
  const hostname = parseUrl(fqdn)?.hostname ?? (fqdn || host.tags.get('netbios-name'));
  if (hostname) facts.hostname = hostname;
  // Nessus lists one OS guess per line when unsure; the first is its best.
  const os = (host.tags.get('operating-system') ?? '').split('\n')[0]?.trim();
  if (os) facts.os = os;
  return facts;
}

function nessusFinding(item: NessusItem, hostLocation: Pick<FindingLocation, 'host' | 'url'>): Finding {
  const { attributes } = item;
  const text = (name: string): string => item.texts.get(name) ?? '';
  const pluginId = (attributes.pluginID ?? '').trim();
  if (pluginId === '') {
    throw new MalformedResultError(`The Nessus report has a ReportItem on ${hostLocation.host} without a pluginID.`);
  }
  const protocol = (attributes.protocol ?? '').trim().toLowerCase() || 'tcp';
  const port = nessusPort(attributes.port ?? '0', pluginId);
  const checkId = normaliseTitle(text('cm:compliance-check-id'));
  return {
    fingerprint: `nessus:${pluginId}:${protocol}/${port}${checkId === '' ? '' : `:${checkId}`}`,
    location: {
      ...hostLocation,
      ...(port !== 0 && { port }),
      ...((protocol === 'tcp' || protocol === 'udp') && { protocol }),
    },
    definition: {
      scan_type: 'NESSUS',
      title: nessusTitle(item, pluginId),
      threat_level: nessusThreatLevel(item),
      description: joinSections([
        ['', text('synopsis')],
        ['', text('description')],
      ]),
      solution: /^n\/a$/i.test(text('solution').trim()) ? '' : normaliseText(text('solution')),
      cvss: nessusCvss(item),
      additional_info: nessusInfo(item, pluginId, protocol, port),
    },
  };
}

function nessusPort(reported: string, pluginId: string): number {
  const port = Number(reported.trim());
  if (reported.trim() === '' || !Number.isInteger(port) || port < 0 || port > 65535) {
    throw new MalformedResultError(`The Nessus report gives plugin ${pluginId} the port '${reported}', which is not a port number.`);
  }
  return port;
}

function nessusTitle(item: NessusItem, pluginId: string): string {
  const checkName = normaliseTitle(item.texts.get('cm:compliance-check-name') ?? '');
  // The pluginName attribute is always written; the optional <plugin_name> element was seen edited ("dummy").
  const pluginName = normaliseTitle(item.attributes.pluginName ?? '') || normaliseTitle(item.texts.get('plugin_name') ?? '');
  return checkName || pluginName || `Nessus plugin ${pluginId}`;
}

const NESSUS_SEVERITIES: Record<string, ThreatLevel> = { '0': 'INFO', '1': 'LOW', '2': 'MEDIUM', '3': 'HIGH', '4': 'CRITICAL' };
const NESSUS_RISK_FACTORS: Record<string, ThreatLevel> = {
  none: 'INFO',
  info: 'INFO',
  low: 'LOW',
  medium: 'MEDIUM',
  high: 'HIGH',
  critical: 'CRITICAL',
};

function nessusThreatLevel(item: NessusItem): ThreatLevel {
  const cvss3 = parseCvssScore(item.texts.get('cvss3_base_score') || item.texts.get('cvssv3'));
  if (cvss3 !== undefined) return threatLevelFromCvssScore(cvss3);
  const bySeverity = NESSUS_SEVERITIES[(item.attributes.severity ?? '').trim()];
  if (bySeverity !== undefined) return bySeverity;
  return NESSUS_RISK_FACTORS[(item.texts.get('risk_factor') ?? '').trim().toLowerCase()] ?? 'INFO';
}

function nessusCvss(item: NessusItem): string {
  for (const name of ['cvss3_base_score', 'cvssv3', 'cvss_base_score', 'cvss']) {
    const score = item.texts.get(name) ?? '';
    if (parseCvssScore(score) !== undefined) return score.trim();
  }
  return '';
}

function nessusInfo(item: NessusItem, pluginId: string, protocol: string, port: number): Record<string, unknown> {
  const { attributes } = item;
  const text = (name: string): string => normaliseTitle(item.texts.get(name) ?? '');
  const info: Record<string, unknown> = { plugin_id: pluginId, port, protocol };
  const optional: Record<string, string> = {
    plugin_name: normaliseTitle(attributes.pluginName ?? '') || text('plugin_name'),
    plugin_family: normaliseTitle(attributes.pluginFamily ?? ''),
    svc_name: normaliseTitle(attributes.svc_name ?? ''),
    risk_factor: text('risk_factor'),
    plugin_type: text('plugin_type'),
    cvss_vector: text('cvss_vector'),
    cvss3_vector: text('cvss3_vector'),
    compliance_check_id: text('cm:compliance-check-id'),
  };
  for (const [key, value] of Object.entries(optional)) if (value !== '') info[key] = value;
  const severity = Number.parseInt(attributes.severity ?? '', 10);
  if (Number.isInteger(severity)) info.severity = severity;
  if (text('exploit_available') !== '') info.exploit_available = text('exploit_available').toLowerCase() === 'true';
  info.cves = [...new Set((item.lists.get('cve') ?? []).filter((id) => id !== ''))];
  info.see_also = (item.texts.get('see_also') ?? '').split(/\s+/).filter((url) => url !== '');
  info.xrefs = (item.lists.get('xref') ?? []).filter((ref) => ref !== '');
  const output = normaliseText(item.texts.get('plugin_output') ?? '');
  if (output !== '') info.plugin_output = truncateText(output, MAX_PLUGIN_OUTPUT_CHARS);
  return info;
}
