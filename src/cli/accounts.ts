/** `vigil accounts create | list | create-key` (CONTRACT.md): operators' account management, safe beside a running `serve`. */
import { loadSettings } from '../config/settings.js';
import { FEATURES, PLANS, type Account, type Feature, type Plan } from '../domain/accounts/account.js';
import { composeCore, type Core } from '../main/composition-root.js';
import { UsageError, parseCommandArgs, wholeNumber } from './usage.js';

const SUBCOMMANDS = 'create, list or create-key';

export async function runAccountsCommand(args: string[]): Promise<number> {
  const [subcommand, ...rest] = args;
  switch (subcommand) {
    case 'create':
      return withCore((core) => createAccount(core, rest));
    case 'list':
      return withCore((core) => listAccounts(core, rest));
    case 'create-key':
      return withCore((core) => createKey(core, rest));
    default:
      throw new UsageError(`unknown accounts command '${subcommand ?? ''}'; use ${SUBCOMMANDS} (vigil --help)`);
  }
}

async function withCore(run: (core: Core) => number): Promise<number> {
  const core = composeCore(loadSettings());
  try {
    return run(core);
  } finally {
    core.db.close();
  }
}

function createAccount(core: Core, args: string[]): number {
  const values = parseCommandArgs(args, {
    name: { type: 'string' },
    plan: { type: 'string' },
    feature: { type: 'string', multiple: true },
    'monthly-scan-limit': { type: 'string' },
    'min-qod': { type: 'string' },
    namespace: { type: 'string' },
  });
  if (values.name === undefined || values.name.trim() === '') throw new UsageError('--name is required');
  const plan = values.plan ?? 'free';
  if (!(PLANS as readonly string[]).includes(plan)) throw new UsageError(`--plan must be one of: ${PLANS.join(', ')}`);
  for (const feature of values.feature ?? []) {
    if (!(FEATURES as readonly string[]).includes(feature)) throw new UsageError(`--feature must be one of: ${FEATURES.join(', ')}`);
  }
  const { account, apiKey } = core.accounts.createAccount({
    name: values.name,
    plan: plan as Plan,
    features: (values.feature ?? []) as Feature[],
    monthlyScanLimit: wholeNumber('--monthly-scan-limit', values['monthly-scan-limit']) ?? null,
    minOpenvasQod: wholeNumber('--min-qod', values['min-qod'], 100),
    namespace: values.namespace,
  });
  process.stdout.write(`${JSON.stringify({ account_id: account.id, api_key: apiKey })}\n`);
  return 0;
}

function listAccounts(core: Core, args: string[]): number {
  const values = parseCommandArgs(args, { json: { type: 'boolean' } });
  const accounts = core.accounts.listAccounts();
  process.stdout.write(values.json === true ? accounts.map((account) => `${JSON.stringify(accountJson(account))}\n`).join('') : accountsTable(accounts));
  return 0;
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
export function accountsTable(accounts: Account[]): string {
  const rows = [
    ['ID', 'NAME', 'PLAN', 'FEATURES', 'NAMESPACE'],
    ...accounts.map((account) => [account.id, account.name, account.plan, account.features.join(',') || '-', account.namespace]),
  ];
  const widths = rows[0]!.map((_, column) => Math.max(...rows.map((row) => row[column]!.length)));
  return rows.map((row) => `${row.map((cell, column) => cell.padEnd(widths[column]!)).join('   ').trimEnd()}\n`).join('');
}

function createKey(core: Core, args: string[]): number {
  const values = parseCommandArgs(args, { account: { type: 'string' }, name: { type: 'string' } });
  if (values.account === undefined) throw new UsageError('--account is required (an account id or name; vigil accounts list shows them)');
  const account = core.accounts.findAccount(values.account);
  const { id, apiKey } = core.accounts.createApiKey(account.id, values.name ?? 'created with vigil accounts create-key');
  process.stdout.write(`${JSON.stringify({ account_id: account.id, key_id: id, api_key: apiKey })}\n`);
  return 0;
}
