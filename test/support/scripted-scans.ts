/**
 * Scripted scanner output for controller tests: a runner whose workloads end
 * with whatever nmap XML the test writes, so rules are driven by scanner
 * output rather than by poking the store.
 */
import type { Scan } from '../../src/domain/scans/scan.js';
import type { HostResolver, WorkloadOutput, WorkloadRunner, WorkloadStatus } from '../../src/app/ports.js';
import { ScanReconciler } from '../../src/app/controller/scan-reconciler.js';
import { FakeTimers } from './fake-timers.js';
import type { Clock } from '../../src/domain/clock.js';
import { parseCidrList } from '../../src/domain/targets/ipv4.js';
import type { Core } from '../../src/main/composition-root.js';

/** Finishes a workload with whatever outputs the test scripted for it. */
export class FakeRunner implements WorkloadRunner {
  readonly statuses = new Map<string, WorkloadStatus>();
  async start(scan: Scan): Promise<void> {
    this.statuses.set(scan.id, { phase: 'Running', progress: 0 });
  }
  async observe(scanId: string): Promise<WorkloadStatus> {
    return this.statuses.get(scanId) ?? { phase: 'Missing' };
  }
  async stop(): Promise<void> {}
  async release(scanId: string): Promise<void> {
    this.statuses.delete(scanId);
  }
  async deleteCollectedWorkload(): Promise<void> {}
  onChange(): void {}
}

export interface OpenPort {
  port: number;
  protocol?: 'tcp' | 'udp';
  service?: string;
  /** vulners script entries matched to the port's software. */
  vulners?: Array<{ id: string; cvss: string }>;
}

export interface NmapHostSpec {
  address: string;
  ports: OpenPort[];
}

export const escapeXml = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/"/g, '&quot;');

export function portXml({ port, protocol = 'tcp', service = 'http', vulners = [] }: OpenPort): string {
  const script =
    vulners.length === 0
      ? ''
      : `<script id="vulners" output="vulners"><table key="cpe:/a:acme:${service}:1.0">` +
        vulners
          .map(
            (entry) =>
              `<table><elem key="cvss">${entry.cvss}</elem><elem key="id">${escapeXml(entry.id)}</elem><elem key="is_exploit">false</elem><elem key="type">cve</elem></table>`,
          )
          .join('') +
        '</table></script>';
  return (
    `<port protocol="${protocol}" portid="${port}"><state state="open" reason="syn-ack"/>` +
    `<service name="${service}" product="acme-${service}" version="1.0" method="probed"/>${script}</port>`
  );
}

/** An nmap -oX report: one up host per entry, with the given open ports. */
export function nmapXml(hosts: NmapHostSpec[]): string {
  const body = hosts
    .map((host) => `<host><status state="up"/><address addr="${host.address}" addrtype="ipv4"/><ports>${host.ports.map(portXml).join('')}</ports></host>`)
    .join('');
  return `<?xml version="1.0"?><nmaprun scanner="nmap">${body}</nmaprun>`;
}

export const xmlOutput = (content: string): WorkloadOutput => ({ file: 'result.xml', contentType: 'application/xml', content: Buffer.from(content) });

/** The real Scan controller on a core store, driving the scripted runner; loopback allowed; a failed reconcile fails the test. */
export function scriptedScanController(core: Core, runner: FakeRunner, resolver: HostResolver, clock: Clock): ScanReconciler {
  return new ScanReconciler({
    scans: core.scanRepository,
    accounts: core.accountRepository,
    runner,
    resolver,
    resultFiles: core.resultFiles,
    history: core.history,
    staging: core.staging,
    clock,
    timers: new FakeTimers(),
    maxConcurrentScans: 10,
    allowTargets: parseCidrList('127.0.0.0/8'),
    onError: (key, error) => {
      throw new Error(`reconcile of ${key} failed: ${String(error)}`);
    },
  });
}

/** A Greenbone report with one result per entry, all on 127.0.0.1. */
export function openVasXml(results: Array<{ oid: string; name: string; port: string; severity: string; qod: number }>): string {
  const body = results
    .map(
      (r) =>
        `<result><name>${r.name}</name><host>127.0.0.1</host><port>${r.port}</port><nvt oid="${r.oid}"><name>${r.name}</name></nvt>` +
        `<severity>${r.severity}</severity><threat>Medium</threat><qod><value>${r.qod}</value><type>remote_banner</type></qod><description>found</description></result>`,
    )
    .join('');
  return `<report><results>${body}</results></report>`;
}
