import type { Account, Feature, Plan } from '../domain/accounts/account.js';
import type { AccountRepository, StoredApiKey } from '../app/ports.js';
import type { Database } from './database.js';

interface AccountRow {
  id: string;
  name: string;
  plan: Plan;
  features: string;
  monthly_scan_limit: number | null;
  min_openvas_qod: number;
  namespace: string;
  created_at: string;
}

interface ApiKeyRow {
  id: string;
  account_id: string;
  name: string;
  hash: Buffer;
  created_at: string;
  revoked_at: string | null;
}

function toAccount(row: AccountRow): Account {
  return {
    id: row.id,
    name: row.name,
    plan: row.plan,
    features: JSON.parse(row.features) as Feature[],
    monthlyScanLimit: row.monthly_scan_limit,
    minOpenvasQod: row.min_openvas_qod,
    namespace: row.namespace,
    createdAt: row.created_at,
  };
}

function toApiKey(row: ApiKeyRow): StoredApiKey {
  return { id: row.id, accountId: row.account_id, name: row.name, hash: row.hash, createdAt: row.created_at, revokedAt: row.revoked_at };
}

export class SqliteAccountRepository implements AccountRepository {
  private readonly statements;

  constructor(private readonly db: Database) {
    this.statements = {
      insert: db.prepare(`INSERT INTO accounts (id, name, plan, features, monthly_scan_limit, min_openvas_qod, namespace, created_at)
        VALUES (@id, @name, @plan, @features, @monthlyScanLimit, @minOpenvasQod, @namespace, @createdAt)`),
      byId: db.prepare('SELECT * FROM accounts WHERE id = ?'),
      byName: db.prepare('SELECT * FROM accounts WHERE name = ?'),
      byNamespace: db.prepare('SELECT * FROM accounts WHERE namespace = ?'),
      count: db.prepare('SELECT COUNT(*) AS n FROM accounts'),
      all: db.prepare('SELECT * FROM accounts ORDER BY created_at, name'),
      insertKey: db.prepare(`INSERT INTO api_keys (id, account_id, name, lookup, hash, created_at)
        VALUES (@id, @accountId, @name, @lookup, @hash, @createdAt)`),
      keysByLookup: db.prepare(`SELECT k.id AS key_id, k.account_id, k.name AS key_name, k.hash, k.created_at AS key_created_at, k.revoked_at, a.*
        FROM api_keys k JOIN accounts a ON a.id = k.account_id WHERE k.lookup = ? AND k.revoked_at IS NULL`),
      keysByAccount: db.prepare('SELECT * FROM api_keys WHERE account_id = ? ORDER BY created_at DESC, id'),
      revokeKey: db.prepare('UPDATE api_keys SET revoked_at = ? WHERE account_id = ? AND id = ? AND revoked_at IS NULL'),
    };
  }

  insert(account: Account): void {
    this.statements.insert.run({ ...account, features: JSON.stringify(account.features) });
  }

  findById(id: string): Account | undefined {
    const row = this.statements.byId.get(id) as AccountRow | undefined;
    return row && toAccount(row);
  }

  findByName(name: string): Account | undefined {
    const row = this.statements.byName.get(name) as AccountRow | undefined;
    return row && toAccount(row);
  }

  findByNamespace(namespace: string): Account | undefined {
    const row = this.statements.byNamespace.get(namespace) as AccountRow | undefined;
    return row && toAccount(row);
  }

  list(): Account[] {
    return (this.statements.all.all() as AccountRow[]).map(toAccount);
  }

  count(): number {
    return (this.statements.count.get() as { n: number }).n;
  }

  insertApiKey(key: { id: string; accountId: string; name: string; lookup: string; hash: Buffer; createdAt: string }): void {
    this.statements.insertKey.run(key);
  }

  findActiveKeysByLookup(lookup: string): Array<{ key: StoredApiKey; account: Account }> {
    const rows = this.statements.keysByLookup.all(lookup) as Array<
      AccountRow & { key_id: string; key_name: string; hash: Buffer; key_created_at: string; revoked_at: string | null }
    >;
    return rows.map((row) => ({
      key: { id: row.key_id, accountId: row.id, name: row.key_name, hash: row.hash, createdAt: row.key_created_at, revokedAt: row.revoked_at },
      account: toAccount(row),
    }));
  }

  listApiKeys(accountId: string): StoredApiKey[] {
    return (this.statements.keysByAccount.all(accountId) as ApiKeyRow[]).map(toApiKey);
  }

  revokeApiKey(accountId: string, keyId: string, at: string): boolean {
    return this.statements.revokeKey.run(at, accountId, keyId).changes > 0;
  }

  transaction<T>(fn: () => T): T {
    return this.db.transaction(fn).immediate();
  }
}
