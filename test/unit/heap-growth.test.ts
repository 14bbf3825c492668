/**
 * limitHeapGrowth (src/main/heap-growth.ts): `vigil serve` caps how far V8
 * lets the heap grow between full collections, unless node's command line
 * set the factor; and the cap takes effect (a child process churning through
 * short-lived objects peaks far lower with it than with V8's own factor).
 */
import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { HEAP_GROWING_PERCENT, limitHeapGrowth } from '../../src/main/heap-growth.js';

const CHURN = fileURLToPath(new URL('../support/heap-churn.ts', import.meta.url));

function peakMb(mode: 'limit' | 'default'): number {
  // The image's young generation (Dockerfile NODE_OPTIONS), so that the objects are promoted as in the service.
  const out = execFileSync(process.execPath, ['--max-semi-space-size=4', '--import', 'tsx', CHURN, mode], { encoding: 'utf8', timeout: 60_000 });
  return (JSON.parse(out) as { peakMb: number }).peakMb;
}

describe("the heap's growing factor", function () {
  this.timeout(120_000);

  it('is set to 1 + HEAP_GROWING_PERCENT / 100 unless node was started with a factor of its own', () => {
    const set: string[] = [];
    expect(limitHeapGrowth({ execArgv: ['--max-semi-space-size=4'], setFlags: (flags) => set.push(flags) })).to.equal(true);
    expect(set).to.deep.equal([`--heap-growing-percent=${HEAP_GROWING_PERCENT}`]);
    for (const given of ['--heap-growing-percent=80', '--heap_growing_percent=80'])
      expect(limitHeapGrowth({ execArgv: [given], setFlags: (flags) => set.push(flags) }), given).to.equal(false);
    expect(set).to.have.length(1);
  });

  it('keeps the heap of a process churning through short-lived objects well below what V8 lets it grow to', () => {
    const limited = peakMb('limit');
    const unlimited = peakMb('default');
    expect(limited, `${limited.toFixed(0)} MB with the limit, ${unlimited.toFixed(0)} MB without`).to.be.below(unlimited * 0.7);
  });
});
