/**
 * A child process for test/unit/heap-growth.test.ts: holds a live set, then
 * churns through objects that live a few turns (promoted to the old
 * generation, then dropped, as a streamed response's pieces are), and
 * prints the largest heapUsed it saw. `limit` as its argument: calls
 * limitHeapGrowth() first, as `vigil serve` does.
 */
import { limitHeapGrowth } from '../../src/main/heap-growth.js';

if (process.argv[2] === 'limit') limitHeapGrowth();
const live = Array.from({ length: 100 }, () => Array.from({ length: 10_000 }, (_, i) => ({ i })));
const recent: unknown[] = [];
let peak = 0;
for (let n = 0; n < 2_000; n++) {
  recent.push(Array.from({ length: 2_000 }, (_, i) => ({ n, i, text: `piece ${i}` })));
  if (recent.length > 40) recent.shift();
  if (n % 10 === 0) await new Promise((resolve) => setImmediate(resolve));
  peak = Math.max(peak, process.memoryUsage().heapUsed);
}
process.stdout.write(JSON.stringify({ peakMb: peak / 1e6, live: live.length }));
