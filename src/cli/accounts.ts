import { loadSettings } from '../config/settings.js';
import { FEATURES, PLANS, type Feature, type Plan } from '../domain/accounts/account.js';
import { composeCore } from '../main/composition-root.js';
import { UsageError, parseCommandArgs, wholeNumber } from './usage.js';

export async function runAccountsCommand(args: string[]): Promise<number> {
  const [subcommand, ...rest] = args;
  if (subcommand !== 'create') throw new UsageError(`unknown accounts command '${subcommand ?? ''}'; use 'vigil accounts create --name NAME'`);
  const values = parseCommandArgs(rest, {
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
  const core = composeCore(loadSettings());
  try {
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
  } finally {
    core.db.close();
  }
}
