/**
 * Vigil's modules for a benchmark's child process: the compiled build when
 * there is one at least as new as every source file (make bench builds
 * first): code run through tsx carries its helpers (keepNames) and would be
 * measured slower than it runs in production, and a stale build would
 * measure code that is no longer Vigil's: then the sources run, and the
 * child says so on stderr.
 */
import { existsSync, statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { newestMtime } from './processes.js';

const probe = new URL('../../dist/src/parsers/index.js', import.meta.url);
const built = existsSync(probe) && statSync(probe).mtimeMs >= newestMtime(fileURLToPath(new URL('../../src', import.meta.url)));
if (!built && existsSync(probe))
  process.stderr.write('bench child: dist/ is older than src/, measuring the sources through tsx (make build for the compiled code)\n');

/** Whether the child runs the compiled build. */
export const runsCompiled = built;

/** A module of src/ by its path there with .js ('config/settings.js'): from dist/ when fresh, else the .ts source. */
export function loadVigil<T>(path: string): Promise<T> {
  const base = built ? '../../dist/src/' : '../../src/';
  return import(new URL(`${base}${built ? path : path.replace(/\.js$/, '.ts')}`, import.meta.url).href) as Promise<T>;
}
