/**
 * `vigil prepare-inputs --from DIR --to DIR`: the first init container of a
 * scanner Job that has input files (the ZAP plan, a login script). The inputs
 * arrive as a read-only Secret volume; the scanner reads them from its
 * writable output directory, so they are copied there, readable by the
 * scanner's user only. Secret volumes hold each key as a symlink into a
 * hidden `..data` folder: only the visible names are copied.
 */
import { copyFile, chmod, readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { UsageError, parseCommandArgs } from './usage.js';

export async function runPrepareInputs(args: string[]): Promise<number> {
  const values = parseCommandArgs(args, { from: { type: 'string' }, to: { type: 'string' } });
  if (values.from === undefined || values.to === undefined) throw new UsageError('--from and --to are required');
  const names = (await readdir(values.from)).filter((name) => !name.startsWith('.'));
  for (const name of names) {
    const source = join(values.from, name);
    if (!(await stat(source)).isFile()) continue;
    const target = join(values.to, name);
    await copyFile(source, target);
    await chmod(target, 0o600);
    process.stdout.write(`prepared ${name}\n`);
  }
  return 0;
}
