/**
 * The risk lifecycle (SPEC.md Scan risk categories and Risk status; DESIGN.md
 * 7) through the real ScanReconciler and a real SQLite store. A fake runner
 * finishes each scan with nmap XML the test writes, so every rule is driven
 * by a scanner output rather than by poking the store. Time is a hand-moved
 * clock: each scan completes one minute after the previous one.
 */
import { expect } from 'chai';
import type { Scan } from '../../src/domain/scans/scan.js';
import type { HostResolver, WorkloadOutput } from '../../src/app/ports.js';
import type { ScanReconciler } from '../../src/app/controller/scan-reconciler.js';
import { composeCore } from '../../src/main/composition-root.js';
import { loadSettings } from '../../src/config/settings.js';
import type { Account } from '../../src/domain/accounts/account.js';
import { InvalidRequestError, NotFoundError } from '../../src/domain/errors.js';
import type { RiskView } from '../../src/domain/risks/risk.js';
import type { Target } from '../../src/domain/targets/target.js';
import { tempDir } from '../support/temp-dir.js';
import { FakeRunner, scriptedScanController, nmapXml, openVasXml, portXml, xmlOutput, type NmapHostSpec, type OpenPort } from '../support/scripted-scans.js';
import { receiveEvents } from '../support/event-receiver.js';

/** Names the fake resolver answers; the test changes them to make a target resolve, fail or turn private. */
const dnsTable = new Map<string, string[]>();
const resolver: HostResolver = {
  async resolve4(host: string) {
    const addresses = dnsTable.get(host);
    if (addresses === undefined) throw Object.assign(new Error('not found'), { code: 'ENOTFOUND' });
    return addresses;
  },
};

const ONE_MINUTE = 60_000;

describe('the risk lifecycle (real controller and store, scripted nmap output)', () => {
  let dir: ReturnType<typeof tempDir>;
  let core: ReturnType<typeof composeCore>;
  let runner: FakeRunner;
  let controller: ScanReconciler;
  let account: Account;
  let nowMs: number;

  beforeEach(() => {
    dir = tempDir();
    nowMs = Date.parse('2026-03-01T10:00:00.000Z');
    const clock = { now: () => new Date(nowMs) };
    core = composeCore(loadSettings({ VIGIL_DATA_DIR: dir.path, VIGIL_ALLOW_TARGETS: '127.0.0.0/8' }), clock);
    account = core.accounts.createAccount({ name: 'acme' }).account;
    receiveEvents(core.webhookEndpoints, account.id);
    runner = new FakeRunner();
    dnsTable.clear();
    dnsTable.set('public.example.com', ['93.184.216.34']);
    controller = scriptedScanController(core, runner, resolver, clock);
  });
  afterEach(() => {
    core.db.close();
    dir.remove();
  });

  /** Starts a scan, lets the controller run it, and finishes its workload with the outputs; one minute later than the last. */
  async function runScan(targets: string[], outputs: WorkloadOutput[], type: Scan['type'] = 'NMAP', who: Account = account): Promise<Scan> {
    nowMs += ONE_MINUTE;
    const scan = core.scans.start(who, { type, targets })[0]!;
    await controller.reconcile(controller.keyOf(scan)!);
    expect(core.scans.get(who, scan.id).state, 'the scan runs').to.equal('RUNNING');
    runner.statuses.set(scan.id, { phase: 'Succeeded', outputs });
    await controller.reconcile(controller.keyOf(scan)!);
    return core.scans.get(who, scan.id);
  }

  const nmapScan = (targets: string[], hosts: NmapHostSpec[], type: Scan['type'] = 'NMAP') => runScan(targets, [xmlOutput(nmapXml(hosts))], type);
  const localhost = (...ports: OpenPort[]): NmapHostSpec[] => [{ address: '127.0.0.1', ports }];

  const risksOf = (targetId: string): RiskView[] => core.risks.list(account, { filters: JSON.stringify({ target_id: [targetId] }) }, (risk) => risk).items;
  const riskByTitle = (targetId: string, title: RegExp): RiskView => {
    const found = risksOf(targetId).filter((risk) => title.test(risk.definition.title));
    expect(found, `one risk titled ${title}`).to.have.length(1);
    return found[0]!;
  };
  const getRisk = (id: string) => core.risks.get(account, id);
  const targetOf = (scan: Scan, address: string): Target => {
    const requested = scan.requestedTargets.find((t) => t.target === address);
    expect(requested, `the scan requested ${address}`).to.not.equal(undefined);
    return core.targets.get(account, requested!.targetId);
  };
  const riskEvents = () =>
    core.scanRepository
      .eventsFor(account.id)
      .filter((event) => event.type.startsWith('risk.'))
      .map((event) => ({
        type: event.type,
        data: event.data as { id: string; status: string; is_accepted: boolean; last_detected_at: string; first_detected_at: string },
      }));
  const isoAt = (scan: Scan) => scan.finishedAt!;

  it('opens a risk on first detection: OPEN, listed in new_open, a risk.created event, first and last detection equal', async () => {
    const scan = await nmapScan(['127.0.0.1'], localhost({ port: 8080 }));
    expect(scan.state).to.equal('SUCCEEDED');
    const target = targetOf(scan, '127.0.0.1');
    const risk = riskByTitle(target.id, /^Open port 8080\/tcp/);
    expect(risk.status).to.equal('OPEN');
    expect(risk.scanType).to.equal('NMAP');
    expect(risk.definition.scan_type).to.equal('NMAP');
    expect(risk.firstDetectedAt).to.equal(risk.lastDetectedAt);
    expect(risk.firstDetectedAt).to.equal(isoAt(scan));
    expect(scan.risks).to.deep.equal({ newOpen: [risk.id], stillOpen: [], closed: [] });
    const events = riskEvents();
    expect(events.map((e) => `${e.type} ${e.data.id}`)).to.deep.equal([`risk.created ${risk.id}`]);
    expect(events[0]!.data).to.include({ status: 'OPEN', is_accepted: false, first_detected_at: isoAt(scan), last_detected_at: isoAt(scan) });
  });

  it('keeps a risk detected again OPEN and lists it in still_open: last_detected_at moves, first_detected_at stays, a risk.updated event', async () => {
    const first = await nmapScan(['127.0.0.1'], localhost({ port: 8080 }));
    const risk = riskByTitle(targetOf(first, '127.0.0.1').id, /8080/);
    const second = await nmapScan(['127.0.0.1'], localhost({ port: 8080 }));
    expect(second.risks).to.deep.equal({ newOpen: [], stillOpen: [risk.id], closed: [] });
    const again = getRisk(risk.id);
    expect(again).to.include({ status: 'OPEN', firstDetectedAt: isoAt(first), lastDetectedAt: isoAt(second) });
    expect(isoAt(second) > isoAt(first)).to.equal(true);
    const events = riskEvents();
    expect(events.map((e) => e.type)).to.deep.equal(['risk.created', 'risk.updated']);
    expect(events[1]!.data).to.include({ id: risk.id, status: 'OPEN', last_detected_at: isoAt(second), first_detected_at: isoAt(first) });
  });

  it('closes a risk that a later scan of the same target and type does not detect, and lists it in closed', async () => {
    const first = await nmapScan(['127.0.0.1'], localhost({ port: 8080 }, { port: 9090 }));
    const target = targetOf(first, '127.0.0.1');
    const gone = riskByTitle(target.id, /8080/);
    const kept = riskByTitle(target.id, /9090/);
    const second = await nmapScan(['127.0.0.1'], localhost({ port: 9090 }));
    expect(second.risks).to.deep.equal({ newOpen: [], stillOpen: [kept.id], closed: [gone.id] });
    expect(getRisk(gone.id)).to.include({ status: 'CLOSED', firstDetectedAt: isoAt(first), lastDetectedAt: isoAt(first) });
    expect(getRisk(kept.id).status).to.equal('OPEN');
    const closedEvent = riskEvents()
      .filter((e) => e.data.id === gone.id)
      .at(-1)!;
    expect(closedEvent).to.deep.include({ type: 'risk.updated' });
    expect(closedEvent.data.status).to.equal('CLOSED');
    // A risk already CLOSED is not closed again by the next scan that misses it.
    const third = await nmapScan(['127.0.0.1'], localhost({ port: 9090 }));
    expect(third.risks.closed).to.deep.equal([]);
    expect(getRisk(gone.id).status).to.equal('CLOSED');
  });

  it('re-opens a closed risk that is detected again, listed in still_open and not new_open, with its first detection kept', async () => {
    const first = await nmapScan(['127.0.0.1'], localhost({ port: 8080 }));
    const risk = riskByTitle(targetOf(first, '127.0.0.1').id, /8080/);
    await nmapScan(['127.0.0.1'], localhost());
    expect(getRisk(risk.id).status).to.equal('CLOSED');
    const third = await nmapScan(['127.0.0.1'], localhost({ port: 8080 }));
    expect(third.risks).to.deep.equal({ newOpen: [], stillOpen: [risk.id], closed: [] });
    expect(getRisk(risk.id)).to.include({ status: 'OPEN', firstDetectedAt: isoAt(first), lastDetectedAt: isoAt(third) });
    expect(risksOf(targetOf(first, '127.0.0.1').id)).to.have.length(1);
    expect(riskEvents().map((e) => `${e.type}:${e.data.status}`)).to.deep.equal(['risk.created:OPEN', 'risk.updated:CLOSED', 'risk.updated:OPEN']);
  });

  it('closes nothing of NMAP with a scan of another type (NMAP_UDP) of the same target, nor with a scan of another target', async () => {
    const first = await nmapScan(['127.0.0.1'], localhost({ port: 8080 }));
    const target = targetOf(first, '127.0.0.1');
    const tcp = riskByTitle(target.id, /8080\/tcp/);

    const udp = await nmapScan(['127.0.0.1'], localhost({ port: 161, protocol: 'udp', service: 'snmp' }), 'NMAP_UDP');
    expect(udp.state).to.equal('SUCCEEDED');
    expect(udp.risks.closed).to.deep.equal([]);
    expect(udp.risks.stillOpen).to.deep.equal([]);
    expect(udp.risks.newOpen).to.have.length(1);
    const udpRisk = getRisk(udp.risks.newOpen[0]!);
    expect(udpRisk).to.include({ scanType: 'NMAP_UDP', targetId: target.id });
    expect(udpRisk.definition.scan_type).to.equal('NMAP_UDP');
    expect(getRisk(tcp.id)).to.include({ status: 'OPEN', lastDetectedAt: isoAt(first) });

    const other = await nmapScan(['127.0.0.2'], [{ address: '127.0.0.2', ports: [] }]);
    expect(other.state).to.equal('SUCCEEDED');
    expect(other.risks).to.deep.equal({ newOpen: [], stillOpen: [], closed: [] });
    expect(getRisk(tcp.id).status).to.equal('OPEN');
    expect(getRisk(udpRisk.id).status).to.equal('OPEN');

    // The next NMAP_UDP scan that misses the udp port closes only its own risk.
    const udpAgain = await nmapScan(['127.0.0.1'], localhost(), 'NMAP_UDP');
    expect(udpAgain.risks.closed).to.deep.equal([udpRisk.id]);
    expect(getRisk(tcp.id).status).to.equal('OPEN');
  });

  it('closes nothing on a skipped target, whether its name stops resolving or resolves to a private address', async () => {
    dnsTable.set('flaky.example.com', ['93.184.216.40']);
    const first = await nmapScan(
      ['flaky.example.com', '127.0.0.1'],
      [
        { address: '93.184.216.40', ports: [{ port: 8080 }] },
        { address: '127.0.0.1', ports: [] },
      ],
    );
    const flaky = targetOf(first, 'flaky.example.com');
    const risk = riskByTitle(flaky.id, /8080/);
    expect(getRisk(risk.id).status).to.equal('OPEN');
    const scannedAt = core.targets.get(account, flaky.id).lastScannedAt;
    expect(scannedAt).to.equal(isoAt(first));

    for (const [what, addresses] of [
      ['lookup fails', undefined],
      ['private address', ['10.0.0.7']],
    ] as const) {
      if (addresses === undefined) dnsTable.delete('flaky.example.com');
      else dnsTable.set('flaky.example.com', [...addresses]);
      const skipping = await nmapScan(['flaky.example.com', '127.0.0.1'], localhost());
      expect(skipping.state, what).to.equal('SUCCEEDED');
      expect(
        skipping.skippedTargets.map((t) => t.targetId),
        what,
      ).to.deep.equal([flaky.id]);
      expect(skipping.risks, what).to.deep.equal({ newOpen: [], stillOpen: [], closed: [] });
      expect(getRisk(risk.id), what).to.include({ status: 'OPEN', lastDetectedAt: isoAt(first) });
      expect(core.targets.get(account, flaky.id).lastScannedAt, what).to.equal(scannedAt);
    }
  });

  it('gives each target of a two-target scan the findings of its own host, matched by address or by resolved name', async () => {
    const scan = await nmapScan(
      ['127.0.0.1', 'public.example.com'],
      [
        { address: '93.184.216.34', ports: [{ port: 443, service: 'https' }] },
        { address: '127.0.0.1', ports: [{ port: 8080 }, { port: 9090 }] },
      ],
    );
    const local = targetOf(scan, '127.0.0.1');
    const remote = targetOf(scan, 'public.example.com');
    expect(
      risksOf(local.id)
        .map((r) => r.definition.additional_info.port)
        .sort(),
    ).to.deep.equal([8080, 9090]);
    expect(risksOf(remote.id).map((r) => r.definition.additional_info.port)).to.deep.equal([443]);
    expect(scan.risks.newOpen).to.have.length(3);

    // A later scan of both where only the remote host lost its port closes only that target's risk.
    const later = await nmapScan(
      ['127.0.0.1', 'public.example.com'],
      [
        { address: '93.184.216.34', ports: [] },
        { address: '127.0.0.1', ports: [{ port: 8080 }, { port: 9090 }] },
      ],
    );
    expect(later.risks.closed).to.deep.equal([riskByTitle(remote.id, /443/).id]);
    expect(later.risks.stillOpen).to.have.members(risksOf(local.id).map((r) => r.id));
  });

  // Two targets of one scan that resolve to the same address (virtual hosts, a name and its IP):
  // nmap reports one <host> per target, each with the shared address and the target's name as
  // hostname type="user"; findings are told apart by that name.
  it('gives each of two targets sharing one address the findings nmap reported for it', async () => {
    dnsTable.set('a.example.com', ['93.184.216.50']);
    dnsTable.set('b.example.com', ['93.184.216.50']);
    const hostXml = (name: string, port: number) =>
      `<host><status state="up"/><address addr="93.184.216.50" addrtype="ipv4"/><hostnames><hostname name="${name}" type="user"/></hostnames>` +
      `<ports>${portXml({ port })}</ports></host>`;
    const xml = `<?xml version="1.0"?><nmaprun scanner="nmap">${hostXml('a.example.com', 8080)}${hostXml('b.example.com', 9090)}</nmaprun>`;
    const scan = await runScan(['a.example.com', 'b.example.com'], [xmlOutput(xml)]);
    expect(scan.state).to.equal('SUCCEEDED');
    const ports = (address: string) => risksOf(targetOf(scan, address).id).map((risk) => risk.definition.additional_info.port);
    expect({ a: ports('a.example.com'), b: ports('b.example.com') }).to.deep.equal({ a: [8080], b: [9090] });
  });

  // nmap now scans the checked addresses, not the names (issue 16): two names on one address are one
  // <host> without a user hostname, and what it found belongs to both targets; neither closes the other's risks.
  it('gives every target on one address the findings nmap reported for that address', async () => {
    dnsTable.set('a.example.com', ['93.184.216.51']);
    dnsTable.set('b.example.com', ['93.184.216.51']);
    const xml = nmapXml([{ address: '93.184.216.51', ports: [{ port: 8080 }] }]);
    const scan = await runScan(['a.example.com', 'b.example.com'], [xmlOutput(xml)]);
    expect(scan.state).to.equal('SUCCEEDED');
    const ports = (address: string) => risksOf(targetOf(scan, address).id).map((risk) => risk.definition.additional_info.port);
    expect({ a: ports('a.example.com'), b: ports('b.example.com') }).to.deep.equal({ a: [8080], b: [8080] });
    expect(scan.risks.newOpen).to.have.length(2);
  });

  it('lowers the target health score for an open critical risk (not for an open port), recovers when it closes, and sets last_scanned_at', async () => {
    const before = await nmapScan(['127.0.0.1'], localhost({ port: 8080 }));
    const target = targetOf(before, '127.0.0.1');
    expect(core.targets.get(account, target.id).healthScore).to.deep.equal({ score: 100, grade: 'A' });
    expect(core.targets.get(account, target.id).lastScannedAt).to.equal(isoAt(before));

    const vulnerable = await nmapScan(['127.0.0.1'], localhost({ port: 8080, vulners: [{ id: 'CVE-2024-99999', cvss: '9.8' }] }));
    const critical = riskByTitle(target.id, /CVE-2024-99999/);
    expect(critical.definition).to.include({ threat_level: 'CRITICAL', cvss: '9.8' });
    expect(vulnerable.risks.newOpen).to.deep.equal([critical.id]);
    const hurt = core.targets.get(account, target.id);
    expect(hurt.healthScore).to.deep.equal({ score: 60, grade: 'C' });
    expect(hurt.lastScannedAt).to.equal(isoAt(vulnerable));

    const fixed = await nmapScan(['127.0.0.1'], localhost({ port: 8080 }));
    expect(fixed.risks.closed).to.deep.equal([critical.id]);
    const healed = core.targets.get(account, target.id);
    expect(healed.healthScore).to.deep.equal({ score: 100, grade: 'A' });
    expect(healed.lastScannedAt).to.equal(isoAt(fixed));
  });

  it('fails a scan whose output is unreadable with reason ResultUnreadable, recording no risk, coverage or scan time', async () => {
    const scan = await runScan(['127.0.0.1'], [xmlOutput('<nmaprun><host><status state="up"/>not closed <<<')]);
    expect(scan.state).to.equal('FAILED');
    expect(scan.conditions.at(-1)).to.include({ type: 'Failed', reason: 'ResultUnreadable' });
    expect(scan.risks).to.deep.equal({ newOpen: [], stillOpen: [], closed: [] });
    const target = targetOf(scan, '127.0.0.1');
    expect(risksOf(target.id)).to.deep.equal([]);
    expect(core.riskRepository.coverageOf(target.id, 'NMAP')).to.deep.equal([]);
    expect(core.targets.get(account, target.id).lastScannedAt).to.equal(null);
    expect(riskEvents()).to.deep.equal([]);

    // Nor does the failed scan count as a scan that missed an open risk.
    const detecting = await nmapScan(['127.0.0.1'], localhost({ port: 8080 }));
    const risk = riskByTitle(target.id, /8080/);
    await runScan(['127.0.0.1'], [xmlOutput('garbage, not XML at all')]);
    expect(getRisk(risk.id)).to.include({ status: 'OPEN', lastDetectedAt: isoAt(detecting) });
  });

  describe('deleting a scan recomputes the risks it touched from the detections that remain', () => {
    it('re-opens a risk when the scan that closed it is deleted, with last_detected_at of the remaining detection', async () => {
      const first = await nmapScan(['127.0.0.1'], localhost({ port: 8080 }));
      const second = await nmapScan(['127.0.0.1'], localhost({ port: 8080 }));
      const closing = await nmapScan(['127.0.0.1'], localhost());
      const risk = riskByTitle(targetOf(first, '127.0.0.1').id, /8080/);
      expect(closing.risks.closed).to.deep.equal([risk.id]);
      const eventsBefore = riskEvents().length;

      await core.scans.delete(account, closing.id);
      expect(getRisk(risk.id)).to.include({ status: 'OPEN', firstDetectedAt: isoAt(first), lastDetectedAt: isoAt(second) });
      const emitted = riskEvents().slice(eventsBefore);
      expect(emitted.map((e) => `${e.type} ${e.data.id} ${e.data.status}`)).to.deep.equal([`risk.updated ${risk.id} OPEN`]);
      expect(emitted[0]!.data.last_detected_at).to.equal(isoAt(second));
    });

    it('closes a re-opened risk again when the scan that re-opened it is deleted', async () => {
      const first = await nmapScan(['127.0.0.1'], localhost({ port: 8080 }));
      await nmapScan(['127.0.0.1'], localhost());
      const reopening = await nmapScan(['127.0.0.1'], localhost({ port: 8080 }));
      const risk = riskByTitle(targetOf(first, '127.0.0.1').id, /8080/);
      expect(getRisk(risk.id).status).to.equal('OPEN');
      await core.scans.delete(account, reopening.id);
      expect(getRisk(risk.id)).to.include({ status: 'CLOSED', firstDetectedAt: isoAt(first), lastDetectedAt: isoAt(first) });
      expect(riskEvents().at(-1)).to.deep.include({ type: 'risk.updated' });
      expect(riskEvents().at(-1)!.data.status).to.equal('CLOSED');
    });

    it('removes a risk when the only scan that detected it is deleted, and restores the health score', async () => {
      const first = await nmapScan(['127.0.0.1'], localhost({ port: 8080 }));
      const target = targetOf(first, '127.0.0.1');
      const vulnerable = await nmapScan(['127.0.0.1'], localhost({ port: 8080, vulners: [{ id: 'CVE-2024-99999', cvss: '9.8' }] }));
      const critical = riskByTitle(target.id, /CVE-2024-99999/);
      const port = riskByTitle(target.id, /^Open port 8080/);
      expect(core.targets.get(account, target.id).healthScore.score).to.equal(60);

      await core.scans.delete(account, vulnerable.id);
      expect(() => getRisk(critical.id)).to.throw(NotFoundError);
      expect(risksOf(target.id).map((r) => r.id)).to.deep.equal([port.id]);
      expect(getRisk(port.id)).to.include({ status: 'OPEN', lastDetectedAt: isoAt(first) });
      expect(core.targets.get(account, target.id).healthScore).to.deep.equal({ score: 100, grade: 'A' });

      await core.scans.delete(account, first.id);
      expect(risksOf(target.id)).to.deep.equal([]);
    });

    it('moves first_detected_at to the next detection when the first detecting scan is deleted, with a risk.updated event', async () => {
      const first = await nmapScan(['127.0.0.1'], localhost({ port: 8080 }));
      const second = await nmapScan(['127.0.0.1'], localhost({ port: 8080 }));
      const third = await nmapScan(['127.0.0.1'], localhost({ port: 8080 }));
      const risk = riskByTitle(targetOf(first, '127.0.0.1').id, /8080/);
      const eventsBefore = riskEvents().length;
      await core.scans.delete(account, first.id);
      expect(getRisk(risk.id)).to.include({ status: 'OPEN', firstDetectedAt: isoAt(second), lastDetectedAt: isoAt(third) });
      const emitted = riskEvents().slice(eventsBefore);
      expect(emitted).to.have.length(1);
      expect(emitted[0]!.type).to.equal('risk.updated');
      expect(emitted[0]!.data).to.include({ id: risk.id, first_detected_at: isoAt(second) });
    });

    it('changes nothing and sends no event when a scan of another target or type is deleted', async () => {
      const first = await nmapScan(['127.0.0.1'], localhost({ port: 8080 }));
      const risk = getRisk(first.risks.newOpen[0]!);
      const other = await nmapScan(['127.0.0.2'], [{ address: '127.0.0.2', ports: [{ port: 22, service: 'ssh' }] }]);
      const udp = await nmapScan(['127.0.0.1'], localhost(), 'NMAP_UDP');
      const eventsBefore = riskEvents().length;
      await core.scans.delete(account, udp.id);
      await core.scans.delete(account, other.id);
      expect(getRisk(risk.id)).to.deep.equal(risk);
      expect(riskEvents().slice(eventsBefore)).to.deep.equal([]);
    });
  });

  describe('acceptance', () => {
    async function criticalRisk() {
      const scan = await nmapScan(['127.0.0.1'], localhost({ port: 8080, vulners: [{ id: 'CVE-2024-99999', cvss: '9.8' }] }));
      const target = targetOf(scan, '127.0.0.1');
      return { target, risk: riskByTitle(target.id, /CVE-2024-99999/) };
    }

    it('accepts with a note: is_accepted, an accepted_by entry with the note and times, the health score ignores it, a risk.updated event', async () => {
      const { target, risk } = await criticalRisk();
      expect(core.targets.get(account, target.id).healthScore).to.deep.equal({ score: 60, grade: 'C' });
      nowMs += ONE_MINUTE;
      const at = new Date(nowMs).toISOString();
      const accepted = core.risks.accept(account, risk.id, '  a false positive: backported fix  ');
      expect(accepted.isAccepted).to.equal(true);
      expect(accepted.acceptedBy).to.deep.equal([{ note: 'a false positive: backported fix', created_at: at, last_updated_at: at }]);
      expect(accepted.status).to.equal('OPEN');
      expect(getRisk(risk.id)).to.deep.equal(accepted);
      expect(core.targets.get(account, target.id).healthScore).to.deep.equal({ score: 100, grade: 'A' });
      const event = riskEvents().at(-1)!;
      expect(event.type).to.equal('risk.updated');
      expect(event.data).to.include({ id: risk.id, is_accepted: true });
    });

    it('keeps an acceptance through later detections of the risk', async () => {
      const { target, risk } = await criticalRisk();
      core.risks.accept(account, risk.id, 'by design');
      await nmapScan(['127.0.0.1'], localhost({ port: 8080, vulners: [{ id: 'CVE-2024-99999', cvss: '9.8' }] }));
      expect(getRisk(risk.id).isAccepted).to.equal(true);
      expect(core.targets.get(account, target.id).healthScore.score).to.equal(100);
    });

    it('un-accepts: is_accepted false, the accepted_by history kept, the health score counts it again, a risk.updated event', async () => {
      const { target, risk } = await criticalRisk();
      core.risks.accept(account, risk.id, 'by design');
      nowMs += ONE_MINUTE;
      const unaccepted = core.risks.unaccept(account, risk.id);
      expect(unaccepted.isAccepted).to.equal(false);
      expect(unaccepted.acceptedBy.map((entry) => entry.note)).to.deep.equal(['by design']);
      expect(core.targets.get(account, target.id).healthScore).to.deep.equal({ score: 60, grade: 'C' });
      expect(riskEvents().at(-1)!.data).to.include({ id: risk.id, is_accepted: false });
      // Accepting again adds a second entry.
      expect(core.risks.accept(account, risk.id, 'again').acceptedBy.map((entry) => entry.note)).to.deep.equal(['by design', 'again']);
    });

    it('refuses a blank or too long note with InvalidRequestError and changes nothing', async () => {
      const { risk } = await criticalRisk();
      const eventsBefore = riskEvents().length;
      expect(() => core.risks.accept(account, risk.id, '')).to.throw(InvalidRequestError, /note/);
      expect(() => core.risks.accept(account, risk.id, '   \n\t ')).to.throw(InvalidRequestError, /note/);
      expect(() => core.risks.accept(account, risk.id, 'x'.repeat(1001))).to.throw(InvalidRequestError, /1000/);
      expect(getRisk(risk.id)).to.include({ isAccepted: false });
      expect(getRisk(risk.id).acceptedBy).to.deep.equal([]);
      expect(riskEvents()).to.have.length(eventsBefore);
    });

    it("does not accept another account's risk (NotFoundError)", async () => {
      const { risk } = await criticalRisk();
      const other = core.accounts.createAccount({ name: 'other' }).account;
      expect(() => core.risks.accept(other, risk.id, 'mine now')).to.throw(NotFoundError);
      expect(() => core.risks.unaccept(other, risk.id)).to.throw(NotFoundError);
      expect(getRisk(risk.id).isAccepted).to.equal(false);
    });
  });

  it("lists OpenVAS risks only at or above the account's minimum Quality of Detection", async () => {
    const report = openVasXml([
      { oid: '1.3.6.1.4.1.25623.1.0.100001', name: 'Weak cipher suites', port: '443/tcp', severity: '5.0', qod: 30 },
      { oid: '1.3.6.1.4.1.25623.1.0.100002', name: 'Outdated TLS version', port: '443/tcp', severity: '5.0', qod: 80 },
      { oid: '1.3.6.1.4.1.25623.1.0.100003', name: 'Exactly at the minimum', port: '443/tcp', severity: '5.0', qod: 70 },
    ]);
    const strictScan = await runScan(['127.0.0.1'], [xmlOutput(report)], 'OPENVAS');
    expect(strictScan.state, JSON.stringify(strictScan.conditions)).to.equal('SUCCEEDED');
    expect(strictScan.risks.newOpen).to.have.length(3);
    await nmapScan(['127.0.0.1'], localhost({ port: 8080 }));
    const titles = (who: Account) => core.risks.list(who, {}, (risk) => risk.definition.title).items.sort();
    expect(account.minOpenvasQod).to.equal(70);
    expect(titles(account)).to.deep.equal(['Exactly at the minimum', 'Open port 8080/tcp (http acme-http 1.0)', 'Outdated TLS version']);
    // The low-QoD risk exists and can be read by id; only the list leaves it out.
    const low = strictScan.risks.newOpen.map(getRisk).find((risk) => risk.definition.title === 'Weak cipher suites')!;
    expect(low.definition.additional_info.qod).to.equal(30);

    const lenient = core.accounts.createAccount({ name: 'lenient', minOpenvasQod: 20 }).account;
    const lenientScan = await runScan(['127.0.0.1'], [xmlOutput(report)], 'OPENVAS', lenient);
    expect(lenientScan.state).to.equal('SUCCEEDED');
    expect(titles(lenient)).to.deep.equal(['Exactly at the minimum', 'Outdated TLS version', 'Weak cipher suites']);
  });
});
