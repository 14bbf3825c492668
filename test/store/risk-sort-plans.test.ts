/**
 * GET /v1/risks's sort in the store: each order is right, pages continue
 * without gaps or repeats through ties, and each is read by walking an index
 * (EXPLAIN QUERY PLAN of the very statement the repository runs: an index
 * used for the risks and no temporary B-tree, which would mean sorting every
 * risk of the account for each page).
 */
import { expect } from 'chai';
import type { RiskSortField } from '../../src/app/ports.js';
import type { SortDirection } from '../../src/domain/lists/list-query.js';
import type { CursorValue } from '../../src/domain/lists/page-token.js';
import { THREAT_LEVELS, type ThreatLevel } from '../../src/domain/risks/finding.js';
import type { RiskView } from '../../src/domain/risks/risk.js';
import { AccountsService } from '../../src/app/accounts-service.js';
import { systemClock } from '../../src/domain/clock.js';
import { SqliteAccountRepository } from '../../src/store/accounts-repository.js';
import { openDatabase, type Database } from '../../src/store/database.js';
import { SqliteRiskRepository } from '../../src/store/risks-repository.js';
import { SqliteTargetRepository } from '../../src/store/targets-repository.js';
import { planOf } from '../support/query-plan.js';
import { aRisk } from '../support/risks.js';
import { aTarget } from '../support/targets.js';
import { tempDir } from '../support/temp-dir.js';

const FIELDS: RiskSortField[] = ['threat_level', 'first_detected_at', 'last_detected_at', 'target'];
const SEVERITY: Record<ThreatLevel, number> = { CRITICAL: 4, HIGH: 3, MEDIUM: 2, LOW: 1, INFO: 0 };

describe('store: sorted risk lists', () => {
  let dir: ReturnType<typeof tempDir>;
  let db: Database;
  let risks: SqliteRiskRepository;
  let accountId: string;
  let otherAccountId: string;
  const seqOf = new Map<string, number>();

  function seed(account: string, targetCount: number, perTarget: number): void {
    const targets = new SqliteTargetRepository(db);
    db.transaction(() => {
      for (let t = 0; t < targetCount; t++) {
        // Addresses not in creation order, so sorting by target differs from sorting by seq.
        const target = aTarget(account, `host-${String((t * 7) % targetCount).padStart(3, '0')}.example.com`);
        targets.insert(target);
        for (let i = 0; i < perTarget; i++) {
          const n = t * perTarget + i;
          // Few distinct values: many ties, which the tiebreaker must order.
          const first = new Date(Date.UTC(2026, 0, 1 + (n % 5))).toISOString();
          const last = new Date(Date.UTC(2026, 1, 1 + ((n * 3) % 4))).toISOString();
          const level = THREAT_LEVELS[(n * 13) % THREAT_LEVELS.length]!;
          const risk = aRisk({
            accountId: account,
            targetId: target.id,
            fingerprint: `f${n}`,
            status: n % 3 === 0 ? 'CLOSED' : 'OPEN',
            at: first,
            lastDetectedAt: last,
            title: `Port ${n}`,
            threatLevel: level,
          });
          risks.insert(risk);
        }
      }
    })();
  }

  beforeEach(() => {
    dir = tempDir();
    db = openDatabase(dir.path);
    const accounts = new AccountsService(new SqliteAccountRepository(db), systemClock);
    accountId = accounts.createAccount({ name: 'acme' }).account.id;
    otherAccountId = accounts.createAccount({ name: 'other' }).account.id;
    risks = new SqliteRiskRepository(db);
    seed(accountId, 12, 6);
    seed(otherAccountId, 3, 4);
    seqOf.clear();
    for (const row of db.prepare('SELECT id, seq FROM risks').all() as Array<{ id: string; seq: number }>) seqOf.set(row.id, row.seq);
  });
  afterEach(() => {
    db.close();
    dir.remove();
  });

  const valueOf = (risk: RiskView, field: RiskSortField): string | number =>
    field === 'threat_level'
      ? SEVERITY[risk.definition.threat_level]
      : field === 'target'
        ? risk.target
        : field === 'first_detected_at'
          ? risk.firstDetectedAt
          : risk.lastDetectedAt;

  /** The expected order, computed here: the field, then seq, both in the direction asked. */
  function expectedOrder(all: RiskView[], field: RiskSortField, direction: SortDirection): string[] {
    const sign = direction === 'asc' ? 1 : -1;
    const compare = (a: string | number, b: string | number) => (a < b ? -1 : a > b ? 1 : 0);
    return [...all].sort((a, b) => sign * (compare(valueOf(a, field), valueOf(b, field)) || seqOf.get(a.id)! - seqOf.get(b.id)!)).map((risk) => risk.id);
  }

  function allPages(field: RiskSortField, direction: SortDirection, pageSize: number, filters = {}): string[] {
    const ids: string[] = [];
    let after: CursorValue[] | undefined;
    for (let pages = 0; pages < 200; pages++) {
      const page = risks.list(accountId, { filters, sort: [{ field, direction }], pageSize, after, minOpenvasQod: 0 });
      ids.push(...page.items.map((risk) => risk.id));
      if (page.nextCursor === undefined) return ids;
      after = page.nextCursor;
    }
    throw new Error('too many pages');
  }

  for (const field of FIELDS) {
    for (const direction of ['asc', 'desc'] as const) {
      it(`sorts by ${field} ${direction}, ties by creation the same way, and pages of 5 add up to the whole list`, () => {
        const everything = risks.list(accountId, { filters: {}, pageSize: 500, after: undefined, minOpenvasQod: 0 }).items;
        expect(everything).to.have.length(72);
        const expected = expectedOrder(everything, field, direction);
        expect(
          risks.list(accountId, { filters: {}, sort: [{ field, direction }], pageSize: 500, after: undefined, minOpenvasQod: 0 }).items.map((r) => r.id),
        ).to.deep.equal(expected);
        expect(allPages(field, direction, 5)).to.deep.equal(expected);
        const open = everything.filter((risk) => risk.status === 'OPEN');
        expect(allPages(field, direction, 4, { status: ['OPEN'] })).to.deep.equal(expectedOrder(open, field, direction));
      });

      it(`reads sort=${field} ${direction} by walking an index, first page and later ones, with no temporary B-tree`, () => {
        const first = risks.list(accountId, { filters: {}, sort: [{ field, direction }], pageSize: 5, after: undefined, minOpenvasQod: 0 });
        // A filter that matches many risks walks the sort's index too (this fixture's 72 are all "few" for the default bound).
        const many = new SqliteRiskRepository(db, 0);
        for (const after of [undefined, first.nextCursor]) {
          for (const filters of [{}, { status: ['OPEN'] }]) {
            const plan = planOf(db, () => many.list(accountId, { filters, sort: [{ field, direction }], pageSize: 5, after, minOpenvasQod: 0 }));
            expect(plan, plan).not.to.include('TEMP B-TREE');
            // By target: the account's targets in order (their key), each one's risks by risks_by_target_seq.
            expect(plan, plan).to.match(
              field === 'target' ? /SEARCH r USING INDEX risks_by_target_seq \(target_id=\?\)/ : /(SEARCH|SCAN) r USING INDEX risks_by_account/,
            );
          }
        }
      });
    }
  }

  it('the expression of the threat_level index is the one the list sorts by', () => {
    const plan = planOf(db, () =>
      risks.list(accountId, { filters: {}, sort: [{ field: 'threat_level', direction: 'desc' }], pageSize: 5, after: undefined, minOpenvasQod: 0 }),
    );
    expect(plan).to.include('risks_by_account_threat');
  });
});
