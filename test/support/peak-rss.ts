/**
 * The peak resident memory of this process's own address space, in MiB.
 * process.resourceUsage().maxRSS is not that on Linux: a child spawned by a
 * large process (mocha after a thousand tests) starts its maximum at the
 * parent's RSS when it was forked, and exec keeps it, so a child that never
 * went above 125 MB reported 260. /proc/self/status's VmHWM belongs to the
 * address space exec made; maxRSS is the fallback elsewhere.
 */
import { readFileSync } from 'node:fs';

export function peakRssMb(): number {
  try {
    const match = /^VmHWM:\s+(\d+) kB$/m.exec(readFileSync('/proc/self/status', 'utf8'));
    if (match !== null) return Number(match[1]) / 1024;
  } catch {
    // not Linux
  }
  return process.resourceUsage().maxRSS / 1024;
}

/**
 * For a child that writes a large input to a parser in chunks: the chunks are
 * garbage once the parser has read them, but they live outside the small V8
 * heap, which does not see their pressure. Calling the returned function with
 * the bytes written so far runs a full collection every `everyBytes` (run with
 * --expose-gc), so the peak RSS is what the parser holds, not what the
 * collector has not yet freed.
 */
export function collectingEvery(everyBytes = 32 * 1024 * 1024): (written: number) => void {
  let collectedAt = 0;
  return (written) => {
    if (written - collectedAt < everyBytes) return;
    collectedAt = written;
    (globalThis as { gc?: () => void }).gc?.();
  };
}
