/**
 * `vigil accounts create | list | create-key` (CONTRACT.md): operators'
 * account management, safe beside a running `serve`. Arguments arrive
 * parsed and checked against their choices (program.ts).
 */
import { loadSettings } from '../config/settings.js';
import type { Account, Feature, Plan } from '../domain/accounts/account.js';
import { composeCore, type Core } from '../main/composition-root.js';
import { UsageError, wholeNumber } from './usage.js';

async function withCore(run: (core: Core) => number): Promise<number> {
  const core = composeCore(loadSettings());
  try {
    return run(core);
  } finally {
    core.db.close();
  }
}

export interface CreateAccountOptions {
  name: string;
  plan: string;
  feature: string[];
  monthlyScanLimit?: string;
  minQod?: string;
  namespace?: string;
}

/** `vigil accounts create`: prints {"account_id","api_key"}, the key's only appearance. */
export function createAccount(options: CreateAccountOptions): Promise<number> {
  if (options.name.trim() === '') throw new UsageError('--name must not be empty');
  return withCore((core) => {
    const { account, apiKey } = core.accounts.createAccount({
      name: options.name,
      plan: options.plan as Plan,
      features: options.feature as Feature[],
      monthlyScanLimit: wholeNumber('--monthly-scan-limit', options.monthlyScanLimit) ?? null,
      minOpenvasQod: wholeNumber('--min-qod', options.minQod, 100),
      namespace: options.namespace,
    });
    process.stdout.write(`${JSON.stringify({ account_id: account.id, api_key: apiKey })}\n`);
    return 0;
  });
}

/** `vigil accounts list`: a table, or one JSON object a line with --json. */
export function listAccounts(options: { json?: boolean }): Promise<number> {
  return withCore((core) => {
    const accounts = core.accounts.listAccounts();
    process.stdout.write(options.json === true ? accounts.map((account) => `${JSON.stringify(accountJson(account))}\n`).join('') : accountsTable(accounts));
    return 0;
  });
}

function accountJson(account: Account) {
  return {
    id: account.id,
    name: account.name,
    plan: account.plan,
    features: account.features,
    namespace: account.namespace,
    monthly_scan_limit: account.monthlyScanLimit,
    created_at: account.createdAt,
  };
}

/** Columns padded to their widest cell, as `kubectl get` prints them. */
function accountsTable(accounts: Account[]): string {
  const rows = [
    ['ID', 'NAME', 'PLAN', 'FEATURES', 'NAMESPACE'],
    ...accounts.map((account) => [account.id, account.name, account.plan, account.features.join(',') || '-', account.namespace]),
  ];
  const widths = rows[0]!.map((_, column) => Math.max(...rows.map((row) => row[column]!.length)));
  return rows
    .map(
      (row) =>
        `${row
          .map((cell, column) => cell.padEnd(widths[column]!))
          .join('   ')
          .trimEnd()}\n`,
    )
    .join('');
}

/** `vigil accounts create-key`: prints {"account_id","key_id","api_key"}. */
export function createKey(options: { account: string; name?: string }): Promise<number> {
  return withCore((core) => {
    const account = core.accounts.findAccount(options.account);
    const { id, apiKey } = core.accounts.createApiKey(account.id, options.name ?? 'created with vigil accounts create-key');
    process.stdout.write(`${JSON.stringify({ account_id: account.id, key_id: id, api_key: apiKey })}\n`);
    return 0;
  });
}
