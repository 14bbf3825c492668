import { expect } from 'chai';
import { SqliteAccountRepository } from '../../src/store/accounts-repository.js';
import { SqliteTargetRepository } from '../../src/store/targets-repository.js';
import { openDatabase, type Database } from '../../src/store/database.js';
import { AccountsService } from '../../src/app/accounts-service.js';
import { systemClock } from '../../src/domain/clock.js';
import type { Target } from '../../src/domain/targets/target.js';
import { aTarget } from '../support/targets.js';
import { tempDir } from '../support/temp-dir.js';

describe('store: repositories on a real SQLite file', () => {
  let dir: ReturnType<typeof tempDir>;
  let db: Database;
  let accounts: AccountsService;
  let targets: SqliteTargetRepository;
  let accountId: string;

  beforeEach(() => {
    dir = tempDir();
    db = openDatabase(dir.path);
    accounts = new AccountsService(new SqliteAccountRepository(db), systemClock);
    targets = new SqliteTargetRepository(db);
    accountId = accounts.createAccount({ name: 'acme' }).account.id;
  });
  afterEach(() => {
    db.close();
    dir.remove();
  });

  const target = (address: string, overrides: Partial<Target> = {}): Target => aTarget(accountId, address, overrides);

  const tagRows = () =>
    db
      .prepare('SELECT tag FROM target_tags ORDER BY tag')
      .all()
      .map((row) => (row as { tag: string }).tag);

  describe('targets', () => {
    it('round-trips every field', () => {
      const stored = target('example.com', {
        label: 'L',
        tags: ['a', 'b'],
        lastScannedAt: '2026-01-01T00:00:00.000Z',
        authSeleniumFile: 'login.side',
        origin: 'INTERNAL_SCANNER',
      });
      expect(targets.insert(stored)).to.equal(true);
      expect(targets.findById(accountId, stored.id)).to.deep.equal(stored);
      expect(targets.findByAddress(accountId, 'example.com')).to.deep.equal(stored);
    });

    it('refuses a second target with the same address in one account, but not in another', () => {
      expect(targets.insert(target('example.com'))).to.equal(true);
      expect(targets.insert(target('example.com'))).to.equal(false);
      const other = accounts.createAccount({ name: 'other' }).account.id;
      expect(targets.insert(target('example.com', { accountId: other }))).to.equal(true);
    });

    it('keeps the tag index in step with the tags on insert, update and delete', () => {
      const stored = target('example.com', { tags: ['a', 'b'] });
      targets.insert(stored);
      expect(tagRows()).to.deep.equal(['a', 'b']);
      targets.update({ ...stored, tags: ['c'] });
      expect(tagRows()).to.deep.equal(['c']);
      targets.deleteCascade(accountId, stored.id);
      expect(tagRows()).to.deep.equal([]);
      expect(targets.findById(accountId, stored.id)).to.equal(undefined);
    });

    it("does not find, update or delete another account's target", () => {
      const other = accounts.createAccount({ name: 'other' }).account.id;
      const theirs = target('example.com', { accountId: other, label: 'theirs' });
      targets.insert(theirs);
      expect(targets.findById(accountId, theirs.id)).to.equal(undefined);
      targets.update({ ...theirs, accountId, label: 'hijacked' });
      targets.deleteCascade(accountId, theirs.id);
      expect(targets.findById(other, theirs.id)?.label).to.equal('theirs');
    });

    it('lists by keyset: a page after the cursor never repeats or skips rows', () => {
      for (let i = 0; i < 7; i++) targets.insert(target(`h${i}.example.com`));
      const query = { filters: {}, sort: [], pageSize: 3, after: undefined };
      const first = targets.list(accountId, query);
      const second = targets.list(accountId, { ...query, after: first.nextCursor });
      const third = targets.list(accountId, { ...query, after: second.nextCursor });
      const all = [...first.items, ...second.items, ...third.items].map((t) => t.target);
      expect(all).to.deep.equal(['h6', 'h5', 'h4', 'h3', 'h2', 'h1', 'h0'].map((h) => `${h}.example.com`));
      expect(third.nextCursor).to.equal(undefined);
    });
  });

  describe('accounts and API keys', () => {
    it('finds an account by its key and not by a revoked one', () => {
      const { account, apiKey } = accounts.createAccount({ name: 'keys' });
      expect(accounts.authenticate(apiKey).account.id).to.equal(account.id);
      const keyId = accounts.listApiKeys(account.id)[0]!.id;
      expect(accounts.revokeApiKey(account.id, keyId)).to.equal(true);
      expect(() => accounts.authenticate(apiKey)).to.throw(/not valid/);
      expect(accounts.revokeApiKey(account.id, keyId)).to.equal(false);
    });

    it('does not let one account revoke the key of another', () => {
      const { account } = accounts.createAccount({ name: 'victim' });
      const keyId = accounts.listApiKeys(account.id)[0]!.id;
      expect(accounts.revokeApiKey(accountId, keyId)).to.equal(false);
    });

    it('refuses a second account with the same name or namespace', () => {
      expect(() => accounts.createAccount({ name: 'acme' })).to.throw(/already exists/);
      expect(() => accounts.createAccount({ name: 'acme2', namespace: 'vigil-acme' })).to.throw(/already bound/);
    });

    it('derives a DNS-safe namespace from the name', () => {
      expect(accounts.createAccount({ name: 'My Team!' }).account.namespace).to.equal('vigil-my-team');
    });
  });
});
