/**
 * nmap XML (`nmap -oX`): one finding per open port, one more per entry of the
 * `vulners` NSE script, and the facts (address, hostname, OS) of every host that is up.
 *
 * Decisions:
 * - Only state `open` is reported, for TCP and UDP alike. UDP `open|filtered`
 *   means "no answer", which nmap cannot tell from a firewall dropping the
 *   probe; reporting it would open a Risk for most silent UDP ports and close
 *   it again whenever a probe is answered differently. A UDP service that
 *   answers (or that -sV identifies) is reported `open` and kept.
 * - Every protocol in the file is reported whatever the scan type: a TCP+UDP
 *   file uploaded as NMAP still describes those UDP ports, and the fingerprint
 *   carries the protocol, so tcp/53 and udp/53 stay two Risks.
 * - Only tcp and udp ports: FindingLocation has no other protocol, and `-sO`
 *   lists IP protocol numbers, not ports.
 */
import type { Finding, FindingSink, HostFacts, ResultParser } from '../domain/risks/finding.js';
import { MalformedResultError } from '../domain/errors.js';
import { type FindingBudget, isJsonPlain } from './finding-bounds.js';
import { parseCvssScore, threatLevelFromCvssScore } from './xml/cvss.js';
import { ParseResultBuilder } from './xml/parse-result-builder.js';
import { isNormalisedTitle, normaliseText, normaliseTitle, truncateText } from './xml/plain-text.js';
import { createSafeXmlReader, type XmlElement, type XmlHandlers } from './xml/safe-xml.js';

export type NmapScanType = 'NMAP' | 'NMAP_UDP';

/** Script outputs such as fingerprint-strings run to tens of kilobytes; a Risk needs the gist. */
const MAX_SCRIPT_OUTPUT_CHARS = 8 * 1024;

interface NmapService {
  name: string;
  product: string;
  version: string;
  extrainfo: string;
  tunnel: string;
  /** "probed" when nmap talked to the service, "table" when it only looked the port number up. */
  method: string;
  cpes: string[];
}

/**
 * One entry of the vulners script (a <table> of <elem key="...">): only the
 * keys the findings read are kept; a key listed twice keeps its last value.
 */
interface VulnersEntry {
  cpe: string;
  id: string | undefined;
  cvss: string | undefined;
  type: string | undefined;
  isExploit: string | undefined;
}

interface NmapPort {
  protocol: string;
  portid: string;
  state: string;
  service: NmapService;
  scripts: Array<{ id: string; output: string }>;
  vulners: VulnersEntry[];
}

interface NmapHost {
  up: boolean;
  addresses: Array<{ addr: string; addrtype: string }>;
  hostnames: Array<{ name: string; type: string }>;
  osMatches: Array<{ name: string; accuracy: number }>;
  ports: NmapPort[];
}

/** `budget`: the count of the file's findings and their text, given by tests that read it. */
export function createNmapParser(scanType: NmapScanType, findings?: FindingSink, budget?: FindingBudget): ResultParser {
  const builder = new ParseResultBuilder(findings, budget);
  const reader = createSafeXmlReader(
    { expected: 'an nmap XML report (nmap -oX)', rootElements: ['nmaprun'] },
    new NmapDocumentHandlers((host) => addNmapHost(host, scanType, builder)),
  );
  return {
    write: (chunk) => reader.write(chunk),
    end: () => {
      reader.end();
      return builder.result();
    },
  };
}

/**
 * Turns element events into one NmapHost per <host>, handed over when the
 * host closes. Elements are told apart by depth and name (the root is
 * <nmaprun>, checked by the reader; <host> is at depth 1, its children at 2,
 * a port's at 4), with no path built or joined per element (bench/ingest.ts:
 * the path joins were about a third of the handlers' time), and attributes
 * are read only from the elements kept.
 */
class NmapDocumentHandlers implements XmlHandlers {
  private host: NmapHost | undefined;
  private port: NmapPort | undefined;
  private vulnersCpe = '';
  private vulnersEntry: VulnersEntry | undefined;

  constructor(private readonly onHost: (host: NmapHost) => void) {}

  open(element: XmlElement): void {
    const { depth, name } = element;
    if (depth === 1) {
      if (name === 'host') this.host = { up: false, addresses: [], hostnames: [], osMatches: [], ports: [] };
      return;
    }
    const host = this.host;
    if (host === undefined) return;
    const attributes = element.attributes;
    if (depth === 2) {
      if (name === 'status') host.up = attributes.state === 'up';
      else if (name === 'address') host.addresses.push({ addr: attributes.addr ?? '', addrtype: attributes.addrtype ?? '' });
    } else if (depth === 3) {
      const parent = element.parent!.name;
      if (name === 'port' && parent === 'ports') this.port = newPort(attributes.protocol ?? '', attributes.portid ?? '');
      else if (name === 'hostname' && parent === 'hostnames') host.hostnames.push({ name: attributes.name ?? '', type: attributes.type ?? '' });
      else if (name === 'osmatch' && parent === 'os') host.osMatches.push({ name: attributes.name ?? '', accuracy: Number(attributes.accuracy ?? '') || 0 });
    } else if (this.port !== undefined) {
      this.openPortChild(element, this.port);
    }
  }

  close(element: XmlElement, text: string): void {
    const { depth, name } = element;
    if (depth === 1) {
      if (name === 'host' && this.host !== undefined) {
        this.onHost(this.host);
        this.host = undefined;
      }
      return;
    }
    const port = this.port;
    if (port === undefined) return;
    if (depth === 3 && name === 'port') {
      this.host?.ports.push(port);
      this.port = undefined;
    } else if (depth === 5 && name === 'cpe' && element.parent!.name === 'service') {
      port.service.cpes.push(text.trim());
    } else if (depth === 6 && name === 'table' && this.vulnersEntry !== undefined && isScriptTable(element.parent!)) {
      port.vulners.push(this.vulnersEntry);
      this.vulnersEntry = undefined;
    } else if (
      depth === 7 &&
      name === 'elem' &&
      this.vulnersEntry !== undefined &&
      element.parent!.name === 'table' &&
      isScriptTable(element.parent!.parent!)
    ) {
      setVulnersField(this.vulnersEntry, element.attributes.key, text);
    }
  }

  /** Only a service's <cpe> and a vulners <elem> are read for their text; the rest (mostly the whitespace between elements) is not gathered. */
  gathersText(element: XmlElement): boolean {
    return (element.depth === 5 && element.name === 'cpe') || (element.depth === 7 && element.name === 'elem');
  }

  /** An element below a port's <port> (depth 4 and down): its state, service, scripts and their vulners tables. */
  private openPortChild(element: XmlElement, port: NmapPort): void {
    const { depth, name, attributes } = element;
    if (depth === 4) {
      if (name === 'state') port.state = attributes.state ?? '';
      else if (name === 'service') port.service = serviceOf(attributes, port.service.cpes);
      else if (name === 'script') port.scripts.push({ id: attributes.id ?? '', output: attributes.output ?? '' });
      return;
    }
    if (name !== 'table' || port.scripts[port.scripts.length - 1]?.id !== 'vulners') return;
    if (depth === 5 && element.parent!.name === 'script') this.vulnersCpe = attributes.key ?? '';
    else if (depth === 6 && isScriptTable(element.parent!))
      this.vulnersEntry = { cpe: this.vulnersCpe, id: undefined, cvss: undefined, type: undefined, isExploit: undefined };
  }
}

function setVulnersField(entry: VulnersEntry, key: string | undefined, text: string): void {
  if (key === 'id') entry.id = text.trim();
  else if (key === 'cvss') entry.cvss = text.trim();
  else if (key === 'type') entry.type = text.trim();
  else if (key === 'is_exploit') entry.isExploit = text.trim();
}

/** A <table> directly in a port's <script>. */
function isScriptTable(element: XmlElement): boolean {
  return element.depth === 5 && element.name === 'table' && element.parent!.name === 'script';
}

function serviceOf(attributes: Readonly<Record<string, string>>, cpes: string[]): NmapService {
  return {
    name: attributes.name ?? '',
    product: attributes.product ?? '',
    version: attributes.version ?? '',
    extrainfo: attributes.extrainfo ?? '',
    tunnel: attributes.tunnel ?? '',
    method: attributes.method ?? '',
    cpes,
  };
}

function newPort(protocol: string, portid: string): NmapPort {
  const service = { name: '', product: '', version: '', extrainfo: '', tunnel: '', method: '', cpes: [] };
  return { protocol, portid, state: '', service, scripts: [], vulners: [] };
}

function addNmapHost(host: NmapHost, scanType: NmapScanType, builder: ParseResultBuilder): void {
  const address = primaryAddress(host);
  if (!host.up || address === undefined) return;
  builder.addHost(nmapHostFacts(host, address));
  // The name the user asked nmap to scan tells apart targets that share this address.
  const scannedName = host.hostnames.find((h) => h.type === 'user' && h.name !== '')?.name;
  // Whether the findings' texts need scanning for characters JSON escapes
  // (FindingBudget.add): known from the pieces they are built from, checked
  // once per host, port and vulners entry; the rest of each text is fixed.
  const plainAddress = isJsonPlain(address);
  for (const port of host.ports) {
    if (port.state !== 'open' || (port.protocol !== 'tcp' && port.protocol !== 'udp')) continue;
    const at: PortAt = { address, scannedName, number: portNumber(port), protocol: port.protocol };
    const { service } = port;
    const plainPort =
      plainAddress &&
      isJsonPlain(service.name) &&
      isJsonPlain(service.product) &&
      isJsonPlain(service.version) &&
      isJsonPlain(service.extrainfo) &&
      isJsonPlain(service.tunnel);
    builder.addFinding(openPortFinding(port, at, scanType), plainPort);
    if (port.vulners.length === 0) continue;
    const software = normaliseTitle(`${service.product} ${service.version}`) || service.name;
    const normalisedSoftware = isNormalisedTitle(software);
    for (const entry of port.vulners) {
      const finding = vulnersFinding(entry, at, software || entry.cpe, software === '' ? isNormalisedTitle(entry.cpe) : normalisedSoftware, scanType);
      if (finding === undefined) continue;
      builder.addFinding(
        finding,
        plainPort && isJsonPlain(entry.cpe) && isJsonPlain(entry.id ?? '') && isJsonPlain(entry.type ?? '') && isJsonPlain(entry.cvss ?? ''),
      );
    }
  }
}

/** Where a port's findings are: worked out once per port, not per finding. */
interface PortAt {
  address: string;
  /** The name the user typed for the host, when there is one (FindingLocation.hostname). */
  scannedName: string | undefined;
  number: number;
  protocol: 'tcp' | 'udp';
}

/** A new location per finding: {host, port, protocol} and the hostname last, in the order the findings have always been written in. */
function locationOf(at: PortAt): Finding['location'] {
  return at.scannedName === undefined
    ? { host: at.address, port: at.number, protocol: at.protocol }
    : { host: at.address, port: at.number, protocol: at.protocol, hostname: at.scannedName };
}

/** The IP address nmap scanned; a MAC address (also an <address>) names no target. */
function primaryAddress(host: NmapHost): string | undefined {
  const ip = host.addresses.find((a) => a.addrtype === 'ipv4' && a.addr !== '') ?? host.addresses.find((a) => a.addrtype === 'ipv6' && a.addr !== '');
  return ip?.addr ?? host.hostnames.find((h) => h.name !== '')?.name;
}

function nmapHostFacts(host: NmapHost, address: string): HostFacts {
  const facts: HostFacts = { address };
  const named = host.hostnames.filter((h) => h.name !== '');
  // The name the user typed is the one they know the target by; PTR is only DNS's opinion.
  const hostname = named.find((h) => h.type === 'user') ?? named.find((h) => h.type === 'PTR') ?? named[0];
  if (hostname !== undefined) facts.hostname = hostname.name;
  const best = host.osMatches.reduce<NmapHost['osMatches'][number] | undefined>(
    (kept, match) => (kept === undefined || match.accuracy > kept.accuracy ? match : kept),
    undefined,
  );
  if (best !== undefined && best.name !== '') facts.os = best.name;
  return facts;
}

function portNumber(port: NmapPort): number {
  const number = Number(port.portid);
  if (!Number.isInteger(number) || number < 0 || number > 65535 || port.portid.trim() === '') {
    throw new MalformedResultError(`The nmap report lists a ${port.protocol} port with portid '${port.portid}', which is not a port number.`);
  }
  return number;
}

function serviceLabel(service: NmapService): string {
  return normaliseTitle([service.name, service.product, service.version].filter((part) => part !== '').join(' '));
}

function describeService(service: NmapService): string {
  const software = normaliseTitle([service.product, service.version, service.extrainfo === '' ? '' : `(${service.extrainfo})`].join(' '));
  const identified = [service.name, software].filter((part) => part !== '').join(': ');
  if (identified === '') return '';
  if (service.method === 'table') return ` From its port number alone, nmap guesses the service is ${identified}.`;
  return ` nmap identified the service as ${identified}${service.tunnel === '' ? '' : ` over ${service.tunnel}`}.`;
}

function fingerprintNmapPort(protocol: string, port: number): string {
  return `nmap:${protocol}/${port}`;
}

function openPortFinding(port: NmapPort, at: PortAt, scanType: NmapScanType): Finding {
  const { number, protocol } = at;
  const label = serviceLabel(port.service);
  return {
    fingerprint: fingerprintNmapPort(protocol, number),
    location: locationOf(at),
    definition: {
      scan_type: scanType,
      title: `Open port ${number}/${protocol}${label === '' ? '' : ` (${label})`}`,
      threat_level: 'INFO',
      description: `Port ${number}/${protocol} on ${at.address} is open.${describeService(port.service)}`,
      solution: `If the service on port ${number}/${protocol} does not need to be reachable from where the scan ran, close the port or restrict access to it with a firewall.`,
      cvss: '',
      additional_info: openPortInfo(port, number),
    },
  };
}

function openPortInfo(port: NmapPort, number: number): Record<string, unknown> {
  const { service } = port;
  const info: Record<string, unknown> = { port: number, protocol: port.protocol, state: port.state };
  if (service.name !== '') info.service_name = service.name;
  if (service.product !== '') info.service_product = service.product;
  if (service.version !== '') info.service_version = service.version;
  if (service.extrainfo !== '') info.service_extrainfo = service.extrainfo;
  if (service.tunnel !== '') info.service_tunnel = service.tunnel;
  if (service.cpes.length > 0) info.cpes = service.cpes;
  if (port.scripts.length > 0) {
    info.scripts = port.scripts.map((script) => ({
      id: script.id,
      output: truncateText(normaliseText(script.output), MAX_SCRIPT_OUTPUT_CHARS),
    }));
  }
  return info;
}

/**
 * `software`: the port's product and version, else its service name, else
 * the entry's CPE; may be ''. `normalisedSoftware`: isNormalisedTitle(software),
 * known per port.
 */
function vulnersFinding(entry: VulnersEntry, at: PortAt, software: string, normalisedSoftware: boolean, scanType: NmapScanType): Finding | undefined {
  const id = entry.id ?? '';
  if (id === '') return undefined;
  const { number, protocol } = at;
  const cvss = entry.cvss ?? '';
  const score = parseCvssScore(cvss);
  const type = entry.type ?? '';
  return {
    fingerprint: `nmap:${protocol}/${number}:vulners:${id}`,
    location: locationOf(at),
    definition: {
      scan_type: scanType,
      title: titleOf(`${id} on port ${number}/${protocol}${software ? ` (${software})` : ''}`, normalisedSoftware && isNormalisedTitle(id)),
      // vulners always sends a score; without one nothing says how bad it is, so it is informational.
      threat_level: score === undefined ? 'INFO' : threatLevelFromCvssScore(score),
      description: vulnersDescription(entry, id, type, cvss, `${number}/${protocol}`, at.address),
      solution: `Update ${software || 'the service'} to a release that fixes ${id}, or restrict access to port ${number}/${protocol}.`,
      cvss: score === undefined ? '' : cvss.trim(),
      additional_info: vulnersInfo(entry, id, type, score, number, protocol),
    },
  };
}

/** The title joined from pieces already one line with single spaces is one itself; else it is normalised whole. */
function titleOf(joined: string, fromNormalisedPieces: boolean): string {
  return fromNormalisedPieces ? joined : normaliseTitle(joined);
}

function vulnersDescription(entry: VulnersEntry, id: string, type: string, cvss: string, port: string, address: string): string {
  const facts = type !== '' ? (cvss !== '' ? `${type}, CVSS ${cvss}` : type) : cvss !== '' ? `CVSS ${cvss}` : '';
  const exploit = entry.isExploit === 'true' ? ' A public exploit is listed for it.' : '';
  return (
    `The nmap vulners script matched the software nmap identified on port ${port} of ${address}` +
    `${entry.cpe ? ` (${entry.cpe})` : ''} to ${id}${facts ? ` (${facts})` : ''}.${exploit}` +
    ' The match is made on the reported version only; the host may carry a backported fix.' +
    (type ? ` Details: https://vulners.com/${type}/${id}` : '')
  );
}

function vulnersInfo(entry: VulnersEntry, id: string, type: string, score: number | undefined, port: number, protocol: string): Record<string, unknown> {
  const info: Record<string, unknown> = { vulners_id: id, port, protocol };
  if (type !== '') info.vulners_type = type;
  if (score !== undefined) info.cvss_score = score;
  info.is_exploit = entry.isExploit === 'true';
  if (entry.cpe !== '') info.cpe = entry.cpe;
  info.cves = /^CVE-\d{4}-\d+$/i.test(id) ? [id.toUpperCase()] : [];
  if (type !== '') info.reference = `https://vulners.com/${type}/${id}`;
  return info;
}
