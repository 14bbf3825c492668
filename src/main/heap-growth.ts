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
 * The factor has to leave the old generation room next to the young one.
 * V8 starts marking early when the room left after a full collection is
 * small beside the young generation's capacity (its soft limit compares
 * the two). With the image's 4 MiB semi-spaces (Dockerfile NODE_OPTIONS) a
 * factor of 1.5 leaves enough: bench/targets-list.ts ran 18 full
 * collections beside 334 scavenges and served as many pages as the build
 * before the cap. With larger semi-spaces it does not: a full collection
 * for about every scavenge (99 beside 114 at 8 MiB; 108 beside 24 at V8's
 * own 16 MiB, which `make run` gets) and 20-25% fewer pages served. At a
 * factor of 2 with 16 MiB semi-spaces: 16 full collections and the list
 * as fast as before the cap. So the factor is 1.5 where the young
 * generation is capped at MAX_SEMI_SPACE_MIB_FOR_CAP or less, and 2 where
 * it is larger.
 *
 * The flag is refused in NODE_OPTIONS, so `vigil serve` sets it as it
 * starts, before its heap has grown; V8 reads it at every collection, and
 * worker threads share it. A `--heap-growing-percent` on node's command
 * line wins.
 */
import { setFlagsFromString } from 'node:v8';
import { nodeOptions } from '../config/settings.js';

/** The percent where the young generation is capped, as in the image. */
export const HEAP_GROWING_PERCENT = 50;
/** The percent where it is not (V8's own 16 MiB semi-spaces, or any above MAX_SEMI_SPACE_MIB_FOR_CAP). */
export const HEAP_GROWING_PERCENT_LARGE_YOUNG = 100;
/** The largest semi-space, in MiB, beside which HEAP_GROWING_PERCENT leaves the old generation room (measured: 4 yes, 8 no). */
export const MAX_SEMI_SPACE_MIB_FOR_CAP = 4;
/** V8's largest semi-space on 64-bit when no flag sets one. */
const V8_DEFAULT_SEMI_SPACE_MIB = 16;

export interface HeapGrowthOptions {
  execArgv?: readonly string[];
  /** NODE_OPTIONS as node saw it (default: the environment's, read by settings). */
  nodeOptions?: string;
  setFlags?: (flags: string) => void;
}

/**
 * Sets V8's heap growing factor, unless node's command line set one: 1 +
 * HEAP_GROWING_PERCENT / 100 with a young generation of at most
 * MAX_SEMI_SPACE_MIB_FOR_CAP MiB semi-spaces, 1 + HEAP_GROWING_PERCENT_LARGE_YOUNG / 100
 * with larger ones. Returns the percent set, or undefined when it set none.
 */
export function limitHeapGrowth(options: HeapGrowthOptions = {}): number | undefined {
  const execArgv = options.execArgv ?? process.execArgv;
  if (execArgv.some((arg) => /^--heap[-_]growing[-_]percent\b/.test(arg))) return undefined;
  const semiSpace = semiSpaceMiB(execArgv, options.nodeOptions ?? nodeOptions());
  const percent = semiSpace <= MAX_SEMI_SPACE_MIB_FOR_CAP ? HEAP_GROWING_PERCENT : HEAP_GROWING_PERCENT_LARGE_YOUNG;
  (options.setFlags ?? setFlagsFromString)(`--heap-growing-percent=${percent}`);
  return percent;
}

/**
 * The largest semi-space node was started with, in MiB: the last
 * `--max-semi-space-size` on its command line, else in NODE_OPTIONS (node
 * hands V8 the command line after NODE_OPTIONS, so the command line's wins),
 * else V8's default.
 */
export function semiSpaceMiB(execArgv: readonly string[], nodeOptions: string): number {
  return lastSemiSpace(execArgv) ?? lastSemiSpace(nodeOptions.split(/\s+/).filter(Boolean)) ?? V8_DEFAULT_SEMI_SPACE_MIB;
}

function lastSemiSpace(args: readonly string[]): number | undefined {
  let found: number | undefined;
  for (const [index, arg] of args.entries()) {
    const match = /^--max[-_]semi[-_]space[-_]size(?:=(.*))?$/.exec(arg);
    if (match === null) continue;
    const value = Number(match[1] ?? args[index + 1]);
    if (Number.isFinite(value) && value > 0) found = value;
  }
  return found;
}
