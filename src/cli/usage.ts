import { parseArgs, type ParseArgsConfig } from 'node:util';

/** Bad command-line arguments: exit code 2. */
export class UsageError extends Error {}

export function parseCommandArgs<T extends NonNullable<ParseArgsConfig['options']>>(args: string[], options: T) {
  try {
    return parseArgs({ args, options, strict: true, allowPositionals: false }).values;
  } catch (error) {
    // parseArgs explains some mistakes over several lines; stderr gets one sentence.
    const lines = (error as Error).message.split('\n').map((line) => line.trim().replace(/\.$/, ''));
    throw new UsageError(lines.filter(Boolean).join('; '));
  }
}

export function wholeNumber(name: string, value: string | undefined, max = Number.MAX_SAFE_INTEGER): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d+$/.test(value) || Number(value) > max) throw new UsageError(`${name} must be a whole number from 0 to ${max}`);
  return Number(value);
}
