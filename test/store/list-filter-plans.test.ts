/**
 * Issue 29 (one account with a million risks): every filter the API names on
 * risks and scans, and every sort of targets, is read by walking one index
 * range that stops at the page, never by walking all of the account's rows
 * and testing each, nor by sorting them (USE TEMP B-TREE). The plans depend
 * on the indexes, not on how many rows there are (no ANALYZE statistics are
 * kept), so a few rows are seeded; EXPLAIN QUERY PLAN is read of the very
 * statement each repository runs (test/support/query-plan.ts).
 */
import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import type { ReportSelection, TargetSortField } from '../../src/app/ports.js';
import type { SortDirection } from '../../src/domain/lists/list-query.js';
import type { CursorValue } from '../../src/domain/lists/page-token.js';
import type { Risk, RiskView } from '../../src/domain/risks/risk.js';
import type { Scan, ScanSummary } from '../../src/domain/scans/scan.js';
import { AccountsService } from '../../src/app/accounts-service.js';
import { systemClock } from '../../src/domain/clock.js';
import { SqliteAccountRepository } from '../../src/store/accounts-repository.js';
import { openDatabase, type Database } from '../../src/store/database.js';
import { SqliteReportRepository } from '../../src/store/reports-repository.js';
import { SqliteRiskRepository } from '../../src/store/risks-repository.js';
import { SqliteScanRepository } from '../../src/store/scans-repository.js';
import { SqliteTargetRepository } from '../../src/store/targets-repository.js';
import { planOf } from '../support/query-plan.js';
import { aRisk } from '../support/risks.js';
import { aTarget } from '../support/targets.js';
import { tempDir } from '../support/temp-dir.js';

const SEVERITY = { CRITICAL: 4, HIGH: 3, MEDIUM: 2, LOW: 1, INFO: 0 } as const;

describe('store: filtered and sorted lists walk an index to the page', () => {
  let dir: ReturnType<typeof tempDir>;
  let db: Database;
  let accountId: string;
  let risks: SqliteRiskRepository;
  let targets: SqliteTargetRepository;
  let scans: SqliteScanRepository;
  let firstTargetId: string;

  before(() => {
    dir = tempDir();
    db = openDatabase(dir.path);
    accountId = new AccountsService(new SqliteAccountRepository(db), systemClock).createAccount({ name: 'acme' }).account.id;
    risks = new SqliteRiskRepository(db);
    targets = new SqliteTargetRepository(db);
    scans = new SqliteScanRepository(db);
    db.transaction(() => {
      for (let t = 0; t < 20; t++) {
        const target = aTarget(accountId, `host-${t}.example.com`, { label: `label ${t % 4}`, tags: t % 5 === 0 ? ['prod'] : ['dev'] });
        targets.insert(target);
        firstTargetId ??= target.id;
        for (let i = 0; i < 10; i++) risks.insert(riskOf(target.id, t * 10 + i));
      }
      for (let n = 0; n < 30; n++) scans.insert([aScan(n)], []);
    })();
  });
  after(() => {
    db.close();
    dir.remove();
  });

  function riskOf(targetId: string, n: number): Risk {
    return aRisk({
      accountId,
      targetId,
      fingerprint: `f${n}`,
      scanType: n % 2 === 0 ? 'NMAP' : 'OWASP_ZAP',
      status: n % 3 === 0 ? 'CLOSED' : 'OPEN',
      at: new Date(Date.UTC(2026, 0, 1 + (n % 9))).toISOString(),
      title: `Title ${n % 7}`,
      threatLevel: (['HIGH', 'LOW', 'INFO', 'MEDIUM', 'CRITICAL'] as const)[n % 5]!,
    });
  }

  function aScan(n: number): Scan {
    return {
      id: randomUUID(),
      accountId,
      name: `scan-${n}`,
      type: n % 2 === 0 ? 'NMAP' : 'OWASP_ZAP',
      state: n % 3 === 0 ? 'SUCCEEDED' : 'QUEUED',
      progress: 0,
      isAuthenticated: false,
      requestedTargets: [],
      resolvedTargets: [],
      skippedTargets: [],
      conditions: [],
      results: [],
      risks: { newOpen: [], stillOpen: [], closed: [] },
      scheduledBy: n % 4 === 0 ? 'nightly' : n % 4 === 1 ? 'weekly' : null,
      reportId: null,
      createdAt: new Date().toISOString(),
      startedAt: null,
      finishedAt: null,
    };
  }

  /** A plan that walks one named index range to the page: no temporary B-tree, no scan of the table. */
  function expectIndexWalk(plan: string, index: RegExp): void {
    expect(plan, plan).not.to.include('TEMP B-TREE');
    expect(plan, plan).not.to.match(/SCAN (r|t|scans|targets)$/m);
    expect(plan, plan).to.match(index);
  }

  const RISK_FILTERS: Array<[string, Record<string, string[]>, RegExp]> = [
    ['status', { status: ['CLOSED'] }, /SEARCH r USING INDEX risks_by_account_status_threat \(account_id=\? AND status=\? AND <expr>=\?/],
    ['threat_level', { 'risk_definition.threat_level': ['HIGH'] }, /SEARCH r USING INDEX risks_by_account_threat \(account_id=\? AND <expr>=\?/],
    ['scan_type', { 'risk_definition.scan_type': ['OWASP_ZAP'] }, /SEARCH r USING INDEX risks_by_account_scan_type \(account_id=\? AND scan_type=\?/],
    // risk_titles' key, then the pending risks from the newest end (migration 0034; test/store/risk-titles.test.ts).
    [
      'title',
      { 'risk_definition.title': ['Title 3'] },
      /SEARCH k USING PRIMARY KEY \(account_id=\? AND title=\?[^]*SEARCH r USING INDEX risks_by_account \(account_id=\? AND seq>\?/,
    ],
    [
      'status and threat_level',
      { status: ['OPEN'], 'risk_definition.threat_level': ['HIGH'] },
      /SEARCH r USING INDEX risks_by_account_status_threat \(account_id=\? AND status=\? AND <expr>=\?/,
    ],
  ];

  for (const [name, filters, index] of RISK_FILTERS) {
    it(`risks filtered by ${name}: one index range newest first, first page and later ones`, () => {
      const first = risks.list(accountId, { filters, pageSize: 3, after: undefined, minOpenvasQod: 70 });
      expect(first.items).to.have.length(3);
      for (const after of [undefined, first.nextCursor]) {
        expectIndexWalk(
          planOf(db, () => risks.list(accountId, { filters, pageSize: 3, after, minOpenvasQod: 70 })),
          index,
        );
      }
    });
  }

  /** Every page of the list, pages of `pageSize`, each continuing from the cursor of the one before. */
  function allPages<T>(list: (after: CursorValue[] | undefined) => { items: T[]; nextCursor: CursorValue[] | undefined }): T[] {
    const items: T[] = [];
    let after: CursorValue[] | undefined;
    for (let pages = 0; pages < 500; pages++) {
      const page = list(after);
      items.push(...page.items);
      if (page.nextCursor === undefined) return items;
      after = page.nextCursor;
    }
    throw new Error('too many pages');
  }

  const seqOf = (id: string) => (db.prepare('SELECT seq FROM risks WHERE id = ?').get(id) as { seq: number }).seq;

  const MULTI_VALUE_RISK_FILTERS: Array<[string, Record<string, string[]>, (risk: RiskView) => boolean, RegExp]> = [
    ['status', { status: ['CLOSED', 'OPEN'] }, () => true, /SEARCH r USING INDEX risks_by_account_status_threat \(account_id=\? AND status=\? AND <expr>=\?/],
    [
      'threat_level',
      { 'risk_definition.threat_level': ['HIGH', 'CRITICAL'] },
      (risk) => ['HIGH', 'CRITICAL'].includes(risk.definition.threat_level),
      /SEARCH r USING INDEX risks_by_account_threat \(account_id=\? AND <expr>=\?/,
    ],
    [
      'scan_type',
      { 'risk_definition.scan_type': ['OWASP_ZAP', 'NMAP'] },
      () => true,
      /SEARCH r USING INDEX risks_by_account_scan_type \(account_id=\? AND scan_type=\?/,
    ],
    [
      'title',
      { 'risk_definition.title': ['Title 3', 'Title 5', 'Title 3'] },
      (risk) => ['Title 3', 'Title 5'].includes(risk.definition.title),
      /SEARCH k USING PRIMARY KEY \(account_id=\? AND title=\?[^]*SEARCH r USING INDEX risks_by_account \(account_id=\? AND seq>\?/,
    ],
    [
      'status and threat_level',
      { status: ['OPEN', 'CLOSED'], 'risk_definition.threat_level': ['HIGH', 'LOW'] },
      (risk) => ['HIGH', 'LOW'].includes(risk.definition.threat_level),
      /SEARCH r USING INDEX risks_by_account_status_threat \(account_id=\? AND status=\? AND <expr>=\?/,
    ],
    ['tags', { tags: ['prod', 'dev'] }, () => true, /SEARCH r USING INDEX risks_by_target_seq \(target_id=\?/],
    [
      'target_id and threat_level',
      { target_id: [], 'risk_definition.threat_level': ['INFO', 'MEDIUM'] },
      (risk) => risk.targetId === firstTargetId && ['INFO', 'MEDIUM'].includes(risk.definition.threat_level),
      /SEARCH r USING INDEX (risks_by_target_seq \(target_id=\?|risks_by_account_threat \(account_id=\? AND <expr>=\?)/,
    ],
  ];

  for (const [name, given, matches, index] of MULTI_VALUE_RISK_FILTERS) {
    it(`risks filtered by several values of ${name}: one index range per value merged newest first, no sort, pages adding up to the list`, () => {
      const filters = given.target_id === undefined ? given : { ...given, target_id: [firstTargetId, firstTargetId] };
      const everything = risks.list(accountId, { filters: {}, pageSize: 500, after: undefined, minOpenvasQod: 70 }).items;
      const expected = everything.filter(matches).map((risk) => risk.id);
      expect(expected.length).to.be.greaterThan(3);
      expect(everything.map((risk) => seqOf(risk.id))).to.deep.equal(everything.map((risk) => seqOf(risk.id)).sort((a, b) => b - a));
      const paged = allPages((after) => risks.list(accountId, { filters, pageSize: 3, after, minOpenvasQod: 70 }));
      expect(paged.map((risk) => risk.id)).to.deep.equal(expected);
      const first = risks.list(accountId, { filters, pageSize: 3, after: undefined, minOpenvasQod: 70 });
      for (const after of [undefined, first.nextCursor]) {
        const plan = planOf(db, () => risks.list(accountId, { filters, pageSize: 3, after, minOpenvasQod: 70 }));
        expectIndexWalk(plan, index);
        expect(plan, plan).to.include('MERGE (UNION ALL)');
      }
    });
  }

  it('status with many values of another field: one arm per combination, merged, when one per severity too would pass what a merge takes', () => {
    const scanTypes = ['OWASP_ZAP', 'NMAP', ...Array.from({ length: 98 }, (_, index) => `OTHER_${index}`)];
    const filters = { status: ['OPEN', 'CLOSED'], 'risk_definition.scan_type': scanTypes };
    const plan = planOf(db, () => risks.list(accountId, { filters, pageSize: 3, after: undefined, minOpenvasQod: 70 }));
    expect(plan, plan).to.include('MERGE (UNION ALL)');
    expect(plan, plan).not.to.include('TEMP B-TREE');
    const everything = risks.list(accountId, { filters: {}, pageSize: 500, after: undefined, minOpenvasQod: 70 }).items;
    const paged = allPages((after) => risks.list(accountId, { filters, pageSize: 7, after, minOpenvasQod: 70 }));
    expect(paged.map((risk) => risk.id)).to.deep.equal(everything.map((risk) => risk.id));
  });

  for (const direction of ['asc', 'desc'] as const) {
    it(`risks filtered to a few (threat_level HIGH) and sorted by target ${direction}: those risks read by their index range and sorted, not a walk of the sort's index`, () => {
      const filters = { 'risk_definition.threat_level': ['HIGH'] };
      const sort = [{ field: 'target' as const, direction }];
      const plan = planOf(
        db,
        () => risks.list(accountId, { filters, sort, pageSize: 3, after: undefined, minOpenvasQod: 70 }),
        (sql) => sql.includes('ORDER BY +'),
      );
      expect(plan, plan).to.match(/SEARCH r USING INDEX risks_by_account_threat \(account_id=\? AND <expr>=\?/);
      expect(plan, plan).not.to.match(/SCAN (r|t)$/m);
      const paged = allPages((after) => risks.list(accountId, { filters, sort, pageSize: 3, after, minOpenvasQod: 70 }));
      const high = allPages((after) => risks.list(accountId, { filters, pageSize: 500, after, minOpenvasQod: 70 }));
      expect(paged.map((risk) => risk.id).sort()).to.deep.equal(high.map((risk) => risk.id).sort());
      const keys = paged.map((risk) => [risk.target, seqOf(risk.id)] as const);
      const sorted = [...keys].sort((a, b) => (a[0] === b[0] ? a[1] - b[1] : a[0] < b[0] ? -1 : 1));
      expect(keys).to.deep.equal(direction === 'asc' ? sorted : sorted.reverse());
    });
  }

  it("risks filtered by target_id: that target's range of risks_by_target_seq", () => {
    const plan = planOf(db, () => risks.list(accountId, { filters: { target_id: [firstTargetId] }, pageSize: 3, after: undefined, minOpenvasQod: 70 }));
    expectIndexWalk(plan, /SEARCH r USING INDEX risks_by_target_seq \(target_id=\?/);
  });

  it("risks filtered by another account's target: that id is dropped before any risk is read (the index holds no account)", () => {
    const otherId = new AccountsService(new SqliteAccountRepository(db), systemClock).createAccount({ name: 'other' }).account.id;
    const foreign = aTarget(otherId, 'foreign.example.com');
    db.transaction(() => {
      targets.insert(foreign);
      const at = new Date().toISOString();
      for (let i = 0; i < 5; i++)
        risks.insert(aRisk({ accountId: otherId, targetId: foreign.id, fingerprint: `other-${i}`, title: 'Other', threatLevel: 'HIGH', at }));
    })();
    const reads: unknown[][] = [];
    const prepare = db.prepare.bind(db);
    db.prepare = ((sql: string) => {
      const statement = prepare(sql);
      if (sql.includes('FROM risks') || sql.includes('FROM targets t CROSS JOIN risks')) {
        const all = statement.all.bind(statement);
        statement.all = ((...args: unknown[]) => (reads.push(args), all(...args))) as never;
      }
      return statement;
    }) as typeof db.prepare;
    try {
      const list = (ids: string[]) => risks.list(accountId, { filters: { target_id: ids }, pageSize: 100, after: undefined, minOpenvasQod: 70 }).items;
      expect(list([foreign.id])).to.deep.equal([]);
      expect(reads, 'no risk read for a foreign target alone').to.deep.equal([]);
      const mixed = list([foreign.id, firstTargetId]);
      expect(mixed).to.have.length(10);
      expect(mixed.every((risk) => risk.targetId === firstTargetId)).to.equal(true);
      expect(reads.flat(), "the risks read by the account's target only").to.include(firstTargetId).and.not.include(foreign.id);
    } finally {
      db.prepare = prepare;
      db.prepare('DELETE FROM targets WHERE id = ?').run(foreign.id);
    }
  });

  it("risks filtered by tags: the tag's targets from target_tags' key, then their risks by target, and the right ones", () => {
    const tagged = risks.list(accountId, { filters: { tags: ['PROD'] }, pageSize: 100, after: undefined, minOpenvasQod: 70 });
    expect(tagged.items).to.have.length(40);
    expect(tagged.items.every((risk) => risk.tags.includes('prod'))).to.equal(true);
    expect(risks.list(accountId, { filters: { tags: ['nobody'] }, pageSize: 100, after: undefined, minOpenvasQod: 70 }).items).to.deep.equal([]);
    const plan = planOf(db, () => risks.list(accountId, { filters: { tags: ['prod'] }, pageSize: 3, after: undefined, minOpenvasQod: 70 }));
    expect(plan, plan).to.match(/SEARCH r USING INDEX risks_by_target_seq \(target_id=\?/);
    expect(plan, plan).not.to.include('target_tags_by_target');
  });

  it("risks filtered by a tag on many targets: the account newest first, each risk's target sought in target_tags' key, and the right ones", () => {
    // Past one target a tag is "many" here: its targets are not listed first.
    const many = new SqliteRiskRepository(db, undefined, 1);
    const query = (tags: string[], pageSize: number) => ({ filters: { tags }, pageSize, after: undefined, minOpenvasQod: 70 });
    const tagged = many.list(accountId, query(['PROD'], 100));
    expect(tagged.items.map((risk) => risk.id)).to.deep.equal(risks.list(accountId, query(['prod'], 100)).items.map((risk) => risk.id));
    expect(tagged.items).to.have.length(40);
    expect(many.list(accountId, query(['prod', 'dev'], 500)).items).to.have.length(200);
    const plan = planOf(db, () => many.list(accountId, query(['prod'], 3)));
    expectIndexWalk(plan, /SEARCH r USING INDEX risks_by_account \(account_id=\?\)/);
    // One seek per risk: by target_tags' key, or by target_tags_by_target, whose entries carry the key's account and tag.
    expect(plan, plan).to.match(/SEARCH g EXISTS USING [A-Z ]+(target_tags_by_target )?\((?=[^)]*target_seq=\?)(?=[^)]*account_id=\?)(?=[^)]*tag=\?)/);
    expect(plan, plan).not.to.match(/SCAN g|LIST SUBQUERY/);
  });

  const SCAN_FILTERS: Array<[string, Record<string, string[]>, RegExp]> = [
    ['state', { state: ['SUCCEEDED'] }, /SEARCH scans USING INDEX scans_by_account_state \(account_id=\? AND state=\?/],
    ['type', { type: ['OWASP_ZAP'] }, /SEARCH scans USING INDEX scans_by_account_type \(account_id=\? AND type=\?/],
    ['scheduled_by', { scheduled_by: ['nightly'] }, /SEARCH scans USING INDEX scans_by_account_schedule \(account_id=\? AND scheduled_by=\?/],
  ];

  for (const [name, filters, index] of SCAN_FILTERS) {
    it(`scans filtered by ${name}: one index range newest first`, () => {
      const first = scans.list(accountId, { filters, pageSize: 2, after: undefined });
      expect(first.items).to.have.length(2);
      for (const after of [undefined, first.nextCursor])
        expectIndexWalk(
          planOf(db, () => scans.list(accountId, { filters, pageSize: 2, after })),
          index,
        );
    });
  }

  const MULTI_VALUE_SCAN_FILTERS: Array<[string, Record<string, string[]>, (scan: ScanSummary) => boolean, RegExp]> = [
    ['state', { state: ['SUCCEEDED', 'QUEUED'] }, () => true, /SEARCH scans USING INDEX scans_by_account_state \(account_id=\? AND state=\?/],
    ['type', { type: ['OWASP_ZAP', 'NMAP'] }, () => true, /SEARCH scans USING INDEX scans_by_account_type \(account_id=\? AND type=\?/],
    [
      'scheduled_by',
      { scheduled_by: ['nightly', 'weekly'] },
      (scan) => scan.scheduledBy !== null,
      /SEARCH scans USING INDEX scans_by_account_schedule \(account_id=\? AND scheduled_by=\?/,
    ],
    [
      'state and type',
      { state: ['SUCCEEDED', 'QUEUED'], type: ['NMAP', 'OWASP_ZAP'] },
      () => true,
      /SEARCH scans USING INDEX scans_by_account_(state|type) \(account_id=\? AND (state|type)=\?/,
    ],
  ];

  for (const [name, filters, matches, index] of MULTI_VALUE_SCAN_FILTERS) {
    it(`scans filtered by several values of ${name}: one index range per value merged newest first, pages adding up to the list`, () => {
      const expected = scans
        .list(accountId, { filters: {}, pageSize: 500, after: undefined })
        .items.filter(matches)
        .map((scan) => scan.id);
      expect(allPages((after) => scans.list(accountId, { filters, pageSize: 4, after })).map((scan) => scan.id)).to.deep.equal(expected);
      const first = scans.list(accountId, { filters, pageSize: 2, after: undefined });
      for (const after of [undefined, first.nextCursor]) {
        const plan = planOf(db, () => scans.list(accountId, { filters, pageSize: 2, after }));
        expectIndexWalk(plan, index);
        expect(plan, plan).to.include('MERGE (UNION ALL)');
      }
    });
  }

  describe("a report's selection", () => {
    const selection = (risks: Record<string, string[]>, targets: Record<string, string[]> = {}, maxRisks = 5): ReportSelection => ({
      targets,
      risks,
      minOpenvasQod: 70,
      maxRisks,
      maxTargets: 100,
    });
    const riskSelect = (sql: string) => sql.includes('r.definition');

    it("more matches than the cap: the cap's most severe by walking the severity index, and a count that stops one past the cap", () => {
      const reports = new SqliteReportRepository(db);
      const scope = reports.readScope(accountId, selection({}));
      expect(scope.matchedRisks).to.equal(6);
      const all = risks.list(accountId, {
        filters: {},
        sort: [{ field: 'threat_level', direction: 'desc' }],
        pageSize: 5,
        after: undefined,
        minOpenvasQod: 70,
      }).items;
      expect(scope.risks.map((risk) => risk.id)).to.deep.equal(all.map((risk) => risk.id));
      expectIndexWalk(
        planOf(db, () => reports.readScope(accountId, selection({})), riskSelect),
        /SEARCH r USING INDEX risks_by_account_threat \(account_id=\?/,
      );
      const count = planOf(
        db,
        () => reports.readScope(accountId, selection({})),
        (sql) => sql.includes('count(*)'),
      );
      expect(count, count).not.to.match(/SCAN r$/m);
    });

    it("tags: the tagged targets from target_tags' key first, then their risks by target, most severe first", () => {
      const reports = new SqliteReportRepository(db);
      const scope = reports.readScope(accountId, selection({ tags: ['PROD'] }, {}, 1000));
      expect(scope.matchedRisks).to.equal(40);
      expect(scope.risks.map((risk) => risk.definition.threat_level)).to.deep.equal(
        [...scope.risks].sort((a, b) => SEVERITY[b.definition.threat_level] - SEVERITY[a.definition.threat_level]).map((risk) => risk.definition.threat_level),
      );
      const targetsPlan = planOf(
        db,
        () => reports.readScope(accountId, selection({ tags: ['prod'] }, {}, 1000)),
        (sql) => sql.startsWith('SELECT t.id FROM targets'),
      );
      expect(targetsPlan, targetsPlan)
        .to.match(/SEARCH target_tags USING (COVERING INDEX|PRIMARY KEY)/)
        .and.not.include('target_tags_by_target');
      const risksPlan = planOf(db, () => reports.readScope(accountId, selection({ tags: ['prod'] }, {}, 1000)), riskSelect);
      expect(risksPlan, risksPlan).to.match(/SEARCH r USING INDEX risks_by_target_seq \(target_id=\?/);
      // Fewer matches than the cap: they alone are sorted (40 rows here), never the account's.
      expect(risksPlan, risksPlan).not.to.match(/SCAN r$/m);
    });
  });

  const TARGET_SORTS: Array<[TargetSortField, SortDirection, RegExp]> = [
    ['label', 'asc', /SEARCH targets USING INDEX targets_by_label_seq_desc \(account_id=\?/],
    ['label', 'desc', /SEARCH targets USING INDEX targets_by_label \(account_id=\?/],
    // The address is unique in the account: its key orders both ways.
    ['target', 'asc', /SEARCH targets USING INDEX sqlite_autoindex_targets_2 \(account_id=\?/],
    ['target', 'desc', /SEARCH targets USING INDEX sqlite_autoindex_targets_2 \(account_id=\?/],
    ['last_scanned', 'asc', /SEARCH targets USING INDEX targets_by_last_scanned_seq_desc \(account_id=\?/],
    ['last_scanned', 'desc', /SEARCH targets USING INDEX targets_by_last_scanned_seq \(account_id=\?/],
    ['created_at', 'asc', /SEARCH targets USING COVERING INDEX targets_list_json/],
    ['created_at', 'desc', /SEARCH targets USING COVERING INDEX targets_list_json/],
  ];

  for (const [field, direction, index] of TARGET_SORTS) {
    it(`targets sorted by ${field} ${direction}: one index walked to the page, first page and later ones`, () => {
      const first = targets.list(accountId, { filters: {}, sort: [{ field, direction }], pageSize: 3, after: undefined });
      for (const after of [undefined, first.nextCursor]) {
        const query = { filters: {}, sort: [{ field, direction }], pageSize: 3, after };
        expectIndexWalk(
          planOf(db, () => targets.listJson(accountId, query, 1 << 20)),
          index,
        );
      }
    });
  }
});
