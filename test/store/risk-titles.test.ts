/**
 * The title filter's table (migration 0034): risk_titles is written in
 * batches once PENDING_TITLES risks are pending (here a limit of 7), and a
 * title filter reads the merged risks from it and the pending ones from the
 * newest end of the account's risks, so every list is the same whichever
 * side of a batch its risks are: newest first in pages, sorted, with other
 * filters, after deletions and re-titled risks, and on a database migrated
 * with risks in it.
 */
import { expect } from 'chai';
import type { RiskListQuery } from '../../src/app/ports.js';
import type { CursorValue } from '../../src/domain/lists/page-token.js';
import type { Risk } from '../../src/domain/risks/risk.js';
import { AccountsService } from '../../src/app/accounts-service.js';
import { systemClock } from '../../src/domain/clock.js';
import { SqliteAccountRepository } from '../../src/store/accounts-repository.js';
import { applyMigrations, openDatabase, type Database } from '../../src/store/database.js';
import { MIGRATIONS } from '../../src/store/migrations/index.js';
import { RiskTitles } from '../../src/store/risk-titles.js';
import { FEW_MATCHES, SqliteRiskRepository } from '../../src/store/risks-repository.js';
import { SqliteTargetRepository } from '../../src/store/targets-repository.js';
import { planOf } from '../support/query-plan.js';
import { aRisk } from '../support/risks.js';
import { insertRisks } from '../support/store-rows.js';
import { aTarget } from '../support/targets.js';
import { tempDir } from '../support/temp-dir.js';

const LIMIT = 7;
const LEVELS = ['HIGH', 'LOW', 'INFO'] as const;

describe('store: the title filter reads merged and pending risks alike (migration 0034)', () => {
  let dir: ReturnType<typeof tempDir>;
  let db: Database;
  let accountId: string;
  let otherAccountId: string;
  let risks: SqliteRiskRepository;
  let targetIds: string[];
  let n = 0;

  beforeEach(() => {
    dir = tempDir();
    db = openDatabase(dir.path);
    const accounts = new AccountsService(new SqliteAccountRepository(db), systemClock);
    accountId = accounts.createAccount({ name: 'acme' }).account.id;
    otherAccountId = accounts.createAccount({ name: 'other' }).account.id;
    risks = new SqliteRiskRepository(db, FEW_MATCHES, undefined, new RiskTitles(db, LIMIT));
    const targets = new SqliteTargetRepository(db);
    targetIds = [0, 1, 2].map((t) => {
      const target = aTarget(accountId, `host-${t}.example.com`);
      targets.insert(target);
      return target.id;
    });
    const other = aTarget(otherAccountId, 'host-0.example.com');
    targets.insert(other);
    targetIds.push(other.id);
    n = 0;
  });
  afterEach(() => {
    db.close();
    dir.remove();
  });

  /** Risk n of the account (or of the other one, with the same titles), title `Title n % 3`; inserted in a transaction as a recording does. */
  function add(count: number, account: 'own' | 'other' = 'own'): void {
    db.transaction(() => {
      for (let i = 0; i < count; i++, n++) risks.insert(riskOf(account === 'own' ? accountId : otherAccountId, n, account));
    })();
  }

  function riskOf(owner: string, index: number, account: 'own' | 'other'): Risk {
    return aRisk({
      accountId: owner,
      targetId: account === 'own' ? targetIds[index % 3]! : targetIds[3]!,
      fingerprint: `f${index}`,
      status: index % 4 === 0 ? 'CLOSED' : 'OPEN',
      at: new Date(Date.UTC(2026, 0, 1 + (index % 5))).toISOString(),
      title: `Title ${index % 3}`,
      threatLevel: LEVELS[index % 3]!,
    });
  }

  const merged = () => db.prepare('SELECT account_id, title, seq FROM risk_titles ORDER BY seq').raw().all() as Array<[string, string, number]>;
  const upto = () => (db.prepare('SELECT upto FROM risk_titles_merged').get() as { upto: number }).upto;
  const rows = () =>
    db.prepare('SELECT seq, id, account_id, title, status, threat_level, target_id, first_detected_at FROM risks ORDER BY seq DESC').all() as Array<{
      seq: number;
      id: string;
      account_id: string;
      title: string;
      status: string;
      threat_level: string;
      target_id: string;
      first_detected_at: string;
    }>;

  function allPages(query: Omit<RiskListQuery, 'after' | 'pageSize' | 'minOpenvasQod'>, pageSize = 2): string[] {
    const ids: string[] = [];
    let after: CursorValue[] | undefined;
    for (let pages = 0; pages < 200; pages++) {
      const page = risks.list(accountId, { ...query, pageSize, after, minOpenvasQod: 70 });
      ids.push(...page.items.map((risk) => risk.id));
      if (page.nextCursor === undefined) return ids;
      after = page.nextCursor;
    }
    throw new Error('too many pages');
  }

  it('writes no entry until the limit is reached, then every pending risk of every account in one batch, in the inserting transaction', () => {
    add(LIMIT - 1);
    expect(merged()).to.deep.equal([]);
    expect(upto()).to.equal(0);
    add(1, 'other');
    const all = rows();
    expect(upto()).to.equal(all[0]!.seq);
    expect(merged()).to.deep.equal(
      all
        .map((row) => [row.account_id, row.title, row.seq])
        .reverse()
        .sort((a, b) => (a[2] as number) - (b[2] as number)),
    );
    add(LIMIT - 1);
    expect(merged()).to.have.length(LIMIT);
  });

  it('a rolled-back transaction takes its batch back with its risks', () => {
    add(LIMIT - 1);
    expect(() =>
      db.transaction(() => {
        risks.insert(riskOf(accountId, 100, 'own'));
        expect(merged()).to.have.length(LIMIT);
        throw new Error('refused');
      })(),
    ).to.throw('refused');
    expect(merged()).to.deep.equal([]);
    expect(upto()).to.equal(0);
  });

  it('lists a title newest first in pages that add up to every match, merged and pending, never another account’s', () => {
    add(LIMIT * 2 + 3);
    add(4, 'other');
    add(5);
    expect(merged().length).to.be.greaterThan(0);
    expect(rows().filter((row) => row.seq > upto())).to.have.length.greaterThan(0);
    for (const titles of [['Title 1'], ['Title 2', 'Title 0'], ['Title 9']]) {
      const expected = rows()
        .filter((row) => row.account_id === accountId && titles.includes(row.title))
        .map((row) => row.id);
      expect(allPages({ filters: { 'risk_definition.title': titles } }), titles.join()).to.deep.equal(expected);
      expect(allPages({ filters: { 'risk_definition.title': titles } }, 50), titles.join()).to.deep.equal(expected);
    }
  });

  it('lists many titles at once, merged newest first up to 128 and past that read whole and sorted (a compound SELECT holds 500 terms)', () => {
    add(LIMIT * 2 + 3);
    for (const count of [100, 256]) {
      const titles = ['Title 2', 'Title 0', ...Array.from({ length: count - 2 }, (_, index) => `Absent ${index}`)];
      const expected = rows()
        .filter((row) => row.account_id === accountId && titles.includes(row.title))
        .map((row) => row.id);
      expect(allPages({ filters: { 'risk_definition.title': titles } }), String(count)).to.deep.equal(expected);
    }
  });

  it('lists a title with other filters, and sorted, as the rows say', () => {
    add(LIMIT * 3 + 3);
    expect(rows().filter((row) => row.seq > upto() && row.title === 'Title 2')).to.have.length(1);
    const open = rows().filter((row) => row.account_id === accountId && row.title === 'Title 2' && row.status === 'OPEN');
    expect(allPages({ filters: { 'risk_definition.title': ['Title 2'], status: ['OPEN'] } })).to.deep.equal(open.map((row) => row.id));
    const ofTarget = rows().filter((row) => row.title === 'Title 2' && row.target_id === targetIds[1]);
    expect(allPages({ filters: { 'risk_definition.title': ['Title 2'], target_id: [targetIds[1]!] } })).to.deep.equal(ofTarget.map((row) => row.id));
    for (const direction of ['asc', 'desc'] as const) {
      const sorted = rows()
        .filter((row) => row.account_id === accountId && row.title === 'Title 2')
        .sort((a, b) => (a.first_detected_at === b.first_detected_at ? a.seq - b.seq : a.first_detected_at < b.first_detected_at ? -1 : 1));
      const expected = (direction === 'asc' ? sorted : sorted.reverse()).map((row) => row.id);
      expect(allPages({ filters: { 'risk_definition.title': ['Title 2'] }, sort: [{ field: 'first_detected_at', direction }] }), direction).to.deep.equal(
        expected,
      );
    }
  });

  it('a deleted risk leaves its entry with it, a re-titled one is listed under its new title only, merged or pending', () => {
    add(LIMIT + 3);
    const [pending, mergedRow] = [rows()[0]!, rows().at(-1)!];
    expect(pending.seq).to.be.greaterThan(upto());
    expect(mergedRow.seq).to.be.at.most(upto());
    const retitle = db.prepare("UPDATE risks SET title = 'Renamed' WHERE id = ?");
    retitle.run(pending.id);
    retitle.run(mergedRow.id);
    expect(allPages({ filters: { 'risk_definition.title': ['Renamed'] } })).to.deep.equal([pending.id, mergedRow.id]);
    expect(allPages({ filters: { 'risk_definition.title': [pending.title] } })).not.to.include(pending.id);
    expect(allPages({ filters: { 'risk_definition.title': [mergedRow.title] } })).not.to.include(mergedRow.id);
    const deleted = rows().at(-2)!;
    risks.delete(deleted.id);
    risks.delete(mergedRow.id);
    expect(merged().map(([, , seq]) => seq)).not.to.include.members([deleted.seq]);
    expect(merged().map(([, , seq]) => seq)).not.to.include(mergedRow.seq);
    expect(merged()).to.have.length(LIMIT - 2);
    expect(allPages({ filters: { 'risk_definition.title': [deleted.title] } })).not.to.include(deleted.id);
  });

  it("a later page starts its walk of risk_titles at the cursor's seq, and the pending risks are read from the newest end only", () => {
    add(LIMIT * 2 + 1);
    const first = risks.list(accountId, { filters: { 'risk_definition.title': ['Title 1'] }, pageSize: 2, after: undefined, minOpenvasQod: 70 });
    const plan = planOf(db, () =>
      risks.list(accountId, { filters: { 'risk_definition.title': ['Title 1'] }, pageSize: 2, after: first.nextCursor, minOpenvasQod: 70 }),
    );
    expect(plan, plan).to.match(/SEARCH k USING PRIMARY KEY \(account_id=\? AND title=\? AND seq<\?\)/);
    expect(plan, plan).to.match(/SEARCH r USING INDEX risks_by_account \(account_id=\? AND seq>\? AND seq<\?\)/);
    expect(plan, plan).not.to.include('TEMP B-TREE');
  });

  it('migration 0034 writes an entry for every risk already there and marks them all merged', () => {
    const migrated = tempDir();
    const old = openDatabase(
      migrated.path,
      MIGRATIONS.filter((migration) => migration.version <= 33),
    );
    try {
      insertRisks(old, 5);
      applyMigrations(old, MIGRATIONS);
      const seqs = (old.prepare('SELECT seq FROM risks ORDER BY seq').pluck().all() as number[]).map((seq) => ['a1', 't', seq]);
      expect(old.prepare('SELECT account_id, title, seq FROM risk_titles ORDER BY seq').raw().all()).to.deep.equal(seqs);
      expect(old.prepare('SELECT upto FROM risk_titles_merged').pluck().get()).to.equal(5);
      expect(old.prepare("SELECT name FROM sqlite_schema WHERE name = 'risks_by_account_title'").get()).to.equal(undefined);
    } finally {
      old.close();
      migrated.remove();
    }
  });
});
