#!/usr/bin/env node
/**
 * The `vigil` command (CONTRACT.md; the commands are in program.ts). Exit
 * codes: 0 success, 2 bad arguments or configuration, 1 anything else;
 * errors go to stderr as one sentence.
 */
import { SettingsError } from '../config/settings.js';
import { InvalidRequestError } from '../domain/errors.js';
import { buildProgram, CommanderError, exitCodeOf, JOB_COMMANDS, UsageError } from './program.js';

async function main(argv: string[]): Promise<number> {
  // The commands scanner Jobs run get their arguments untouched (a `--` before the hosts included); commander shows their --help.
  const job = JOB_COMMANDS[argv[0] ?? ''];
  if (job !== undefined && !argv.includes('--help') && !argv.includes('-h')) return (await job())(argv.slice(1));
  let action: (() => Promise<number>) | undefined;
  const program = buildProgram({ stdout: (text) => process.stdout.write(text), stderr: (text) => process.stderr.write(text) }, (run) => (action = run));
  if (argv.length === 0) {
    // `vigil` alone: the commands, and the exit code of a usage error.
    program.outputHelp();
    return 2;
  }
  try {
    await program.parseAsync(argv, { from: 'user' });
  } catch (error) {
    if (error instanceof CommanderError) return exitCodeOf(error);
    throw error;
  }
  return action === undefined ? 2 : action();
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
