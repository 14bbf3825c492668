/**
 * How far V8 lets the heap grow past what the last full collection left
 * alive before it collects again. V8 picks a factor of up to 4 when memory
 * looks plentiful; with a live heap of about 55 MB, `vigil serve` grew to
 * 220 MB between full collections under ten clients, nearly all of it
 * garbage that responses streamed over many turns of the event loop had
 * promoted to the old generation (bench/scale.ts). At 1.5 the same load
 * peaked at 276 MB of RSS instead of 409 MB, with 21 full collections
 * instead of 6, each pausing 24 ms at most instead of 52 ms (the heap to
 * mark is smaller).
 *
 * The flag is refused in NODE_OPTIONS, so `vigil serve` sets it as it
 * starts, before its heap has grown; V8 reads it at every collection, and
 * worker threads share it. A `--heap-growing-percent` on node's command
 * line wins.
 */
import { setFlagsFromString } from 'node:v8';

export const HEAP_GROWING_PERCENT = 50;

export interface HeapGrowthOptions {
  execArgv?: readonly string[];
  setFlags?: (flags: string) => void;
}

/** Sets V8's heap growing factor to 1 + HEAP_GROWING_PERCENT / 100 unless node's command line set one; true when it did. */
export function limitHeapGrowth(options: HeapGrowthOptions = {}): boolean {
  const execArgv = options.execArgv ?? process.execArgv;
  if (execArgv.some((arg) => /^--heap[-_]growing[-_]percent\b/.test(arg))) return false;
  (options.setFlags ?? setFlagsFromString)(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`);
  return true;
}
