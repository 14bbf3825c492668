/**
 * The `vigil` command line (CONTRACT.md) on commander: every command and
 * subcommand has `--help`, `vigil --version` prints the version, and exit
 * codes are 0 for success (help and version included), 2 for bad arguments
 * or configuration, 1 for anything else, with one sentence on stderr.
 *
 * Each command's module is imported only when it runs: the upload and
 * prepare containers of every scanner Job start `vigil`, and loading the
 * whole service (express, SQLite, the Kubernetes client) there would cost
 * most of their start-up time and memory. The commands scanner Jobs run
 * (upload-result, scanner, prepare-inputs, login-replay) parse their own
 * arguments; here they get a description and their usage line.
 */
import { Command, CommanderError, InvalidArgumentError, Option } from 'commander';
import { VIGIL_VERSION } from '../domain/scanners/images.js';
import { FEATURES, PLANS } from '../domain/accounts/account.js';
import { UsageError } from './usage.js';

export interface ProgramOutput {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
}

/** What an action resolves to: the process's exit code. */
type Run = () => Promise<number>;

const ENVIRONMENT_NOTE = '\nConfiguration comes from environment variables (VIGIL_DATA_DIR, VIGIL_PORT, ...): see docs/configuration.md.\n';

function accountsCommand(run: (action: Run) => void): Command {
  const accounts = new Command('accounts').description('create and list accounts and their API keys (safe beside a running serve)');
  accounts
    .command('create')
    .description('create an account and its first API key; prints {"account_id","api_key"} (the key is shown only this once)')
    .requiredOption('--name <name>', 'the account name')
    .addOption(new Option('--plan <plan>', 'the plan').choices(PLANS).default('free'))
    .addOption(
      new Option('--feature <feature>', `a feature to enable, repeatable (choices: ${FEATURES.join(', ')})`)
        .argParser(collectChoice('--feature', FEATURES))
        .default([]),
    )
    .option('--monthly-scan-limit <n>', 'scans the account may start a month (default: no limit)')
    .option('--min-qod <n>', 'lowest OpenVAS quality of detection recorded, 0-100')
    .option('--namespace <ns>', 'the Kubernetes namespace the account is bound to (default: vigil-<name>)')
    .action((options) => run(async () => (await import('./accounts.js')).createAccount(options)));
  accounts
    .command('list')
    .description('list every account: id, name, plan, features, namespace')
    .option('--json', 'one JSON object a line instead of a table')
    .action((options) => run(async () => (await import('./accounts.js')).listAccounts(options)));
  accounts
    .command('create-key')
    .description('create another API key for an account; prints it once')
    .requiredOption('--account <id|name>', 'the account id or name')
    .option('--name <name>', 'a name for the key')
    .action((options) => run(async () => (await import('./accounts.js')).createKey(options)));
  return accounts;
}

function webhooksCommand(run: (action: Run) => void): Command {
  const webhooks = new Command('webhooks').description("manage an account's webhook endpoints");
  webhooks
    .command('add')
    .description('register an https:// endpoint; prints {"id","signing_secret"}')
    .requiredOption('--account <id|name>', 'the account id or name')
    .requiredOption('--url <url>', 'the https:// URL events are posted to')
    .action((options) => run(async () => (await import('./webhooks.js')).addWebhook(options)));
  webhooks
    .command('list')
    .description("list the account's endpoints, one JSON object a line (no secrets)")
    .requiredOption('--account <id|name>', 'the account id or name')
    .action((options) => run(async () => (await import('./webhooks.js')).listWebhooks(options)));
  webhooks
    .command('remove')
    .description('remove an endpoint; its pending deliveries are dropped')
    .requiredOption('--account <id|name>', 'the account id or name')
    .requiredOption('--id <id>', 'the endpoint id (vigil webhooks list shows it)')
    .action((options) => run(async () => (await import('./webhooks.js')).removeWebhook(options)));
  return webhooks;
}

/** How each command scanner Jobs run is loaded: main() hands it its arguments as they are. */
export const JOB_COMMANDS: Record<string, () => Promise<(args: string[]) => Promise<number>>> = {
  'upload-result': async () => (await import('./upload-result.js')).runUploadResult,
  scanner: async () => (await import('./scanner.js')).runScannerCommand,
  'prepare-inputs': async () => (await import('./prepare-inputs.js')).runPrepareInputs,
  'login-replay': async () => (await import('./login-replay.js')).runLoginReplay,
};

/** A command scanner Jobs run, which parses its own arguments (`usage` is its synopsis). */
function jobCommand(
  name: string,
  description: string,
  usage: string,
  load: () => Promise<(args: string[]) => Promise<number>>,
  run: (action: Run) => void,
): Command {
  return new Command(name)
    .description(description)
    .usage(usage)
    .helpOption('-h, --help', 'show this help')
    .allowUnknownOption()
    .allowExcessArguments()
    .argument('[arguments...]')
    .action((_args, _options, command: Command) => run(async () => (await load())(command.args)));
}

/** A repeatable option checked against its choices (commander's own choices() keeps only the last value). */
function collectChoice(flag: string, choices: readonly string[]) {
  return (value: string, previous: string[]): string[] => {
    if (!choices.includes(value)) throw new InvalidArgumentError(`Allowed choices are ${choices.join(', ')}.`);
    return [...previous, value];
  };
}

/**
 * The program; `run` receives each action, so that main() awaits it and
 * tests can drive the parser without running anything.
 */
export function buildProgram(output: ProgramOutput, run: (action: Run) => void): Command {
  const program = new Command('vigil')
    .description('Vigil: a self-hosted vulnerability scanning service and Kubernetes operator')
    .version(VIGIL_VERSION, '-v, --version', 'print the version')
    .helpOption('-h, --help', 'show this help')
    .addHelpText('after', ENVIRONMENT_NOTE)
    .configureOutput({ writeOut: output.stdout, writeErr: output.stderr, outputError: (text, write) => write(`vigil: ${text.replace(/^error: /, '')}`) })
    .showSuggestionAfterError(true)
    .exitOverride();
  program
    .command('serve')
    .description('run the API, dashboard, controller, result collector and webhook dispatcher (embedded or kubernetes runtime)')
    .action(() => run(async () => (await import('./serve.js')).runServe()));
  program
    .command('backup')
    .description(
      'write a consistent copy of the data directory into DIR (new or empty), while serve runs or not; VIGIL_DATA_DIR=DIR vigil serve starts from it',
    )
    .argument('<dir>', 'the folder to write the backup into')
    .action((dir: string) => run(async () => (await import('./backup.js')).runBackup(dir)));
  program.addCommand(accountsCommand(run));
  program.addCommand(webhooksCommand(run));
  const job = (name: string, description: string, usage: string, load: () => Promise<(args: string[]) => Promise<number>>) =>
    program.addCommand(jobCommand(name, description, usage, load, run));
  job(
    'upload-result',
    'in scanner Jobs: send the result files to the collector (reads VIGIL_UPLOAD_TOKEN, VIGIL_RESULT_FILES)',
    '--scan ID --url URL --dir DIR',
    JOB_COMMANDS['upload-result']!,
  );
  job(
    'scanner',
    'in scanner Jobs: run an OpenVAS or Nessus scan through its server (reads VIGIL_OPENVAS_*, VIGIL_NESSUS_*)',
    'openvas|nessus --output FILE [--timeout SECONDS] -- HOST [HOST...]',
    JOB_COMMANDS.scanner!,
  );
  job('prepare-inputs', 'in scanner Jobs: copy the input files next to the outputs', '--from DIR --to DIR', JOB_COMMANDS['prepare-inputs']!);
  job(
    'login-replay',
    'in ZAP scan Jobs: replay a login recording (reads VIGIL_ALLOW_TARGETS, VIGIL_CHROMIUM)',
    '--recording FILE --plan-input FILE --plan FILE [--termination-log FILE]',
    JOB_COMMANDS['login-replay']!,
  );
  for (const command of program.commands) command.configureOutput(program.configureOutput()).exitOverride().showSuggestionAfterError(true);
  for (const group of program.commands) for (const command of group.commands) command.configureOutput(program.configureOutput()).exitOverride();
  return program;
}

/** Commander's own refusals (unknown command or option, missing value) are bad arguments; help and version are successes. */
export function exitCodeOf(error: CommanderError): number {
  // 'commander.help' is help shown for an incomplete command (`vigil accounts`): a usage error, as `vigil` alone is.
  return error.code === 'commander.helpDisplayed' || error.code === 'commander.version' ? 0 : 2;
}

export { CommanderError, UsageError };
