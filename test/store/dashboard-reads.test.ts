/**
 * The dashboard's reads on a real database with every migration: counts that
 * leave out what the pages leave out (closed, accepted, low-QoD OpenVAS
 * risks, other accounts), the scans that link to a target, and the risk
 * list's text filter whether few or many targets match it.
 */
import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { AccountsService } from '../../src/app/accounts-service.js';
import { systemClock } from '../../src/domain/clock.js';
import type { ScanType, ThreatLevel } from '../../src/domain/risks/finding.js';
import type { Risk } from '../../src/domain/risks/risk.js';
import type { Scan } from '../../src/domain/scans/scan.js';
import { SqliteAccountRepository } from '../../src/store/accounts-repository.js';
import { SqliteDashboardReadRepository } from '../../src/store/dashboard-read-repository.js';
import { openDatabase, type Database } from '../../src/store/database.js';
import { SqliteRiskRepository } from '../../src/store/risks-repository.js';
import { SqliteScanRepository } from '../../src/store/scans-repository.js';
import { SqliteTargetRepository } from '../../src/store/targets-repository.js';
import { aTarget } from '../support/targets.js';
import { tempDir } from '../support/temp-dir.js';

describe('store: the dashboard reads', () => {
  let dir: ReturnType<typeof tempDir>;
  let db: Database;
  let accountId: string;
  let otherId: string;
  let targets: SqliteTargetRepository;
  let risks: SqliteRiskRepository;
  let scans: SqliteScanRepository;
  let reads: SqliteDashboardReadRepository;

  beforeEach(() => {
    dir = tempDir();
    db = openDatabase(dir.path);
    const accounts = new AccountsService(new SqliteAccountRepository(db), systemClock);
    accountId = accounts.createAccount({ name: 'acme' }).account.id;
    otherId = accounts.createAccount({ name: 'other' }).account.id;
    targets = new SqliteTargetRepository(db);
    risks = new SqliteRiskRepository(db);
    scans = new SqliteScanRepository(db);
    reads = new SqliteDashboardReadRepository(db);
  });
  afterEach(() => {
    db.close();
    dir.remove();
  });

  const addTarget = (address: string, account = accountId, label = '') => {
    const target = aTarget(account, address, { label });
    targets.insert(target);
    return target;
  };

  let fingerprint = 0;
  const addRisk = (
    targetId: string,
    level: ThreatLevel,
    options: { status?: 'OPEN' | 'CLOSED'; accepted?: boolean; type?: ScanType; qod?: number; account?: string } = {},
  ): Risk => {
    const at = new Date().toISOString();
    const risk: Risk = {
      id: randomUUID(),
      accountId: options.account ?? accountId,
      targetId,
      scanType: options.type ?? 'NMAP',
      fingerprint: `f${fingerprint++}`,
      status: options.status ?? 'OPEN',
      firstDetectedAt: at,
      lastDetectedAt: at,
      isAccepted: options.accepted ?? false,
      acceptedBy: [],
      definition: {
        scan_type: options.type ?? 'NMAP',
        title: 't',
        threat_level: level,
        description: '',
        solution: '',
        cvss: '',
        additional_info: options.qod === undefined ? {} : { qod: options.qod },
      },
      createdAt: at,
    };
    risks.insert(risk);
    return risk;
  };

  const addScan = (targetIds: string[], fields: Partial<Scan> = {}): Scan => {
    const scan: Scan = {
      id: randomUUID(),
      accountId,
      name: `scan-${randomUUID()}`,
      type: 'NMAP',
      state: 'SUCCEEDED',
      progress: 100,
      isAuthenticated: false,
      requestedTargets: targetIds.map((targetId) => ({ targetId, target: `address-of-${targetId}` })),
      resolvedTargets: [],
      skippedTargets: [],
      conditions: [],
      results: [],
      risks: { newOpen: [], stillOpen: [], closed: [] },
      scheduledBy: null,
      reportId: null,
      createdAt: '2026-11-20T10:00:00.000Z',
      startedAt: null,
      finishedAt: '2026-11-20T10:05:00.000Z',
      ...fields,
    };
    scans.insert([scan], []);
    return scan;
  };

  it('counts open, unaccepted risks by level, without low-QoD OpenVAS risks or other accounts', () => {
    const web = addTarget('web.example.com');
    addRisk(web.id, 'CRITICAL');
    addRisk(web.id, 'HIGH');
    addRisk(web.id, 'HIGH');
    addRisk(web.id, 'HIGH', { status: 'CLOSED' });
    addRisk(web.id, 'HIGH', { accepted: true });
    addRisk(web.id, 'MEDIUM', { type: 'OPENVAS', qod: 30 });
    addRisk(web.id, 'MEDIUM', { type: 'OPENVAS', qod: 80 });
    const theirs = addTarget('web.example.com', otherId);
    addRisk(theirs.id, 'CRITICAL', { account: otherId });
    expect(reads.openRisksByLevel(accountId, 70)).to.deep.equal({ CRITICAL: 1, HIGH: 2, MEDIUM: 1 });
    expect(reads.openRisksByLevel(accountId, 0)).to.deep.equal({ CRITICAL: 1, HIGH: 2, MEDIUM: 2 });
    expect(reads.openRisksOfTargets(accountId, [web.id, theirs.id], 70)).to.deep.equal(new Map([[web.id, { CRITICAL: 1, HIGH: 2, MEDIUM: 1 }]]));
  });

  it('counts scanned targets by grade and the never-scanned ones apart, per account', () => {
    const scanned = '2026-11-01T00:00:00.000Z';
    addTarget('never.example.com');
    addTarget('also-never.example.com');
    targets.insert(aTarget(accountId, 'a.example.com', { lastScannedAt: scanned }));
    targets.insert(aTarget(accountId, 'c.example.com', { healthScore: { score: 53, grade: 'C' }, lastScannedAt: scanned }));
    addTarget('b.example.com', otherId);
    expect(reads.targetsByGrade(accountId)).to.deep.equal({ byGrade: { A: 1, C: 1 }, notScanned: 2 });
  });

  it("finds a target's scans by its id only, newest first, and the scans that detected a risk", () => {
    const one = addTarget('one.example.com');
    const two = addTarget('two.example.com');
    const first = addScan([one.id, two.id]);
    const second = addScan([two.id]);
    expect(reads.scanIdsOfTarget(accountId, two.id, 10)).to.deep.equal([second.id, first.id]);
    expect(reads.scanIdsOfTarget(accountId, one.id, 10)).to.deep.equal([first.id]);
    expect(reads.scanIdsOfTarget(accountId, two.id, 1)).to.deep.equal([second.id]);
    expect(reads.scanIdsOfTarget(otherId, two.id, 10)).to.deep.equal([]);
    const risk = addRisk(one.id, 'LOW');
    risks.recordDetection(first.id, risk.id);
    expect(reads.scanIdsDetecting(accountId, risk.id, 10)).to.deep.equal([first.id]);
    expect(reads.scanIdsDetecting(otherId, risk.id, 10)).to.deep.equal([]);
  });

  it("sums the scans' new and closed risks per day they finished, since a time, successful scans only", () => {
    const target = addTarget('t.example.com');
    addScan([target.id], { risks: { newOpen: ['a', 'b'], stillOpen: ['c'], closed: ['d'] } });
    addScan([target.id], { risks: { newOpen: ['e'], stillOpen: [], closed: [] }, finishedAt: '2026-11-20T23:00:00.000Z' });
    addScan([target.id], {
      risks: { newOpen: [], stillOpen: [], closed: ['f', 'g'] },
      createdAt: '2026-11-21T10:00:00.000Z',
      finishedAt: '2026-11-21T10:05:00.000Z',
    });
    addScan([target.id], { state: 'FAILED', risks: { newOpen: ['x'], stillOpen: [], closed: [] } });
    addScan([target.id], {
      createdAt: '2026-10-01T10:00:00.000Z',
      finishedAt: '2026-10-01T10:05:00.000Z',
      risks: { newOpen: ['old'], stillOpen: [], closed: [] },
    });
    expect(reads.dailyRiskChanges(accountId, '2026-11-16T00:00:00.000Z')).to.deep.equal([
      { day: '2026-11-20', opened: 3, closed: 1 },
      { day: '2026-11-21', opened: 0, closed: 2 },
    ]);
  });

  it('filters risks by target text the same whether few or many targets match', () => {
    const many = Array.from({ length: 502 }, (_, index) => addTarget(`host-${index}.many.example`));
    const few = [addTarget('alpha.few.example', accountId, 'Alpha'), addTarget('beta.few.example', accountId, 'Checkout ALPHA')];
    const all = [...many, ...few].flatMap((target, index) => (index % 50 === 0 || few.includes(target) ? [addRisk(target.id, 'INFO')] : []));
    const listed = (text: string, pageSize = 500) =>
      risks.list(accountId, { filters: {}, pageSize, after: undefined, minOpenvasQod: 70, targetContains: text }).items.map((risk) => risk.id);
    const expected = (match: (address: string, label: string) => boolean) =>
      all
        .filter((risk) => [...many, ...few].some((target) => target.id === risk.targetId && match(target.target, target.label.toLowerCase())))
        .map((risk) => risk.id)
        .reverse();
    expect(listed('alpha')).to.deep.equal(expected((address, label) => address.includes('alpha') || label.includes('alpha')));
    expect(listed('alpha')).to.have.length(2);
    expect(listed('.many.')).to.deep.equal(expected((address) => address.includes('.many.')));
    expect(listed('.many.')).to.have.length(11);
    expect(listed('.many.', 3)).to.deep.equal(expected((address) => address.includes('.many.')).slice(0, 3));
    expect(listed('nothing at all')).to.deep.equal([]);
  });
});
