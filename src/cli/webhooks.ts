/** `vigil webhooks add --account ID|NAME --url URL` (CONTRACT.md): the same operation as the dashboard's. */
import { loadSettings } from '../config/settings.js';
import { composeCore } from '../main/composition-root.js';
import { UsageError, parseCommandArgs } from './usage.js';

export async function runWebhooksCommand(args: string[]): Promise<number> {
  const [subcommand, ...rest] = args;
  if (subcommand !== 'add') throw new UsageError(`unknown webhooks command '${subcommand ?? ''}'; use 'vigil webhooks add --account ID|NAME --url URL'`);
  const values = parseCommandArgs(rest, { account: { type: 'string' }, url: { type: 'string' } });
  if (values.account === undefined || values.url === undefined) throw new UsageError('--account and --url are required');
  const core = composeCore(loadSettings());
  try {
    const account = core.accounts.findAccount(values.account);
    const endpoint = core.webhookEndpoints.add(account.id, values.url);
    process.stdout.write(`${JSON.stringify({ id: endpoint.id, signing_secret: endpoint.secret })}\n`);
    return 0;
  } finally {
    core.db.close();
  }
}
