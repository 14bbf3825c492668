import type { WebhookEndpoint, WebhookEndpointRepository } from '../app/ports.js';
import type { Database } from './database.js';

interface EndpointRow {
  id: string;
  account_id: string;
  url: string;
  secret: string;
  created_at: string;
}

const toEndpoint = (row: EndpointRow): WebhookEndpoint => ({
  id: row.id,
  accountId: row.account_id,
  url: row.url,
  secret: row.secret,
  createdAt: row.created_at,
});

export class SqliteWebhookEndpointRepository implements WebhookEndpointRepository {
  private readonly statements;

  constructor(db: Database) {
    this.statements = {
      insert: db.prepare('INSERT INTO webhook_endpoints (id, account_id, url, secret, created_at) VALUES (@id, @accountId, @url, @secret, @createdAt)'),
      find: db.prepare('SELECT * FROM webhook_endpoints WHERE account_id = ? AND id = ?'),
      listFor: db.prepare('SELECT * FROM webhook_endpoints WHERE account_id = ? ORDER BY seq'),
      delete: db.prepare('DELETE FROM webhook_endpoints WHERE account_id = ? AND id = ?'),
    };
  }

  insert(endpoint: WebhookEndpoint): void {
    this.statements.insert.run(endpoint);
  }

  find(accountId: string, id: string): WebhookEndpoint | undefined {
    const row = this.statements.find.get(accountId, id) as EndpointRow | undefined;
    return row && toEndpoint(row);
  }

  listFor(accountId: string): WebhookEndpoint[] {
    return (this.statements.listFor.all(accountId) as EndpointRow[]).map(toEndpoint);
  }

  delete(accountId: string, id: string): boolean {
    return this.statements.delete.run(accountId, id).changes > 0;
  }
}
