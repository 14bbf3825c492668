#!/usr/bin/env node
/**
 * The `vigil` command (CONTRACT.md). Exit codes: 0 success, 2 bad arguments
 * or configuration, 1 anything else; errors go to stderr as one sentence.
 */
import { SettingsError } from '../config/settings.js';
import { InvalidRequestError } from '../domain/errors.js';
import { UsageError } from './usage.js';

const USAGE = `Usage:
  vigil serve
  vigil accounts create --name NAME [--plan free|paid] [--feature nessus] [--feature csv_export]
                        [--monthly-scan-limit N] [--min-qod N] [--namespace NS]
  vigil webhooks add --account ID --url URL           (registers an https endpoint; prints its signing secret)
  vigil backup DIR                                    (a consistent copy of the data directory into a new or empty DIR)
  vigil upload-result --scan ID --url URL --dir DIR   (in scanner Jobs; reads VIGIL_UPLOAD_TOKEN, VIGIL_RESULT_FILES)
  vigil scanner openvas|nessus --output FILE [--timeout SECONDS] -- HOST [HOST...]   (in scanner Jobs; reads VIGIL_OPENVAS_*, VIGIL_NESSUS_*)
  vigil prepare-inputs --from DIR --to DIR            (in scanner Jobs: copies input files next to the outputs)
  vigil login-replay --recording FILE --plan-input FILE --plan FILE [--termination-log FILE]
                                                      (in ZAP scan Jobs: replays a login recording; reads VIGIL_ALLOW_TARGETS, VIGIL_CHROMIUM)

Configuration comes from environment variables (see README.md).`;

/**
 * Each subcommand is imported only when it runs: the upload and prepare
 * containers of every scanner Job start `vigil`, and loading the whole
 * service (express, SQLite, the Kubernetes client) there would cost most of
 * their start-up time and memory.
 */
async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  switch (command) {
    case 'serve':
      return (await import('./serve.js')).runServe(rest);
    case 'accounts':
      return (await import('./accounts.js')).runAccountsCommand(rest);
    case 'webhooks':
      return (await import('./webhooks.js')).runWebhooksCommand(rest);
    case 'backup':
      return (await import('./backup.js')).runBackup(rest);
    case 'upload-result':
      return (await import('./upload-result.js')).runUploadResult(rest);
    case 'scanner':
      return (await import('./scanner.js')).runScannerCommand(rest);
    case 'prepare-inputs':
      return (await import('./prepare-inputs.js')).runPrepareInputs(rest);
    case 'login-replay':
      return (await import('./login-replay.js')).runLoginReplay(rest);
    case undefined:
    case 'help':
    case '--help':
    case '-h':
      process.stdout.write(`${USAGE}\n`);
      return command === undefined ? 2 : 0;
    default:
      throw new UsageError(`unknown command '${command}'; run 'vigil --help' for the commands`);
  }
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    const badInput = error instanceof UsageError || error instanceof SettingsError || error instanceof InvalidRequestError;
    process.stderr.write(`vigil: ${(error as Error).message}\n`);
    process.exitCode = badInput ? 2 : 1;
  },
);
