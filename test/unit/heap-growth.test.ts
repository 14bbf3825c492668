/**
 * limitHeapGrowth (src/main/heap-growth.ts): `vigil serve` caps how far V8
 * lets the heap grow between full collections, by 1.5 beside a capped young
 * generation and by 2 beside V8's own, unless node's command line set the
 * factor; and the cap takes effect (a child process churning through
 * short-lived objects peaks far lower with it than with V8's own factor).
 */
import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import {
  HEAP_GROWING_PERCENT,
  HEAP_GROWING_PERCENT_LARGE_YOUNG,
  limitHeapGrowth,
  MAX_SEMI_SPACE_MIB_FOR_CAP,
  semiSpaceMiB,
} from '../../src/main/heap-growth.js';

const CHURN = fileURLToPath(new URL('../support/heap-churn.ts', import.meta.url));

function peakMb(mode: 'limit' | 'default'): number {
  // The image's young generation (Dockerfile NODE_OPTIONS), so that the objects are promoted as in the service.
  const out = execFileSync(process.execPath, ['--max-semi-space-size=4', '--import', 'tsx', CHURN, mode], { encoding: 'utf8', timeout: 60_000 });
  return (JSON.parse(out) as { peakMb: number }).peakMb;
}

describe("the heap's growing factor", function () {
  this.timeout(120_000);

  it('is 1 + HEAP_GROWING_PERCENT / 100 with a capped young generation, unless node was started with a factor of its own', () => {
    const set: string[] = [];
    const setFlags = (flags: string) => set.push(flags);
    expect(limitHeapGrowth({ execArgv: ['--max-semi-space-size=4'], nodeOptions: '', setFlags })).to.equal(HEAP_GROWING_PERCENT);
    expect(set).to.deep.equal([`--heap-growing-percent=${HEAP_GROWING_PERCENT}`]);
    for (const given of ['--heap-growing-percent=80', '--heap_growing_percent=80'])
      expect(limitHeapGrowth({ execArgv: [given], nodeOptions: '--max-semi-space-size=4', setFlags }), given).to.equal(undefined);
    expect(set).to.have.length(1);
  });

  it("is 1 + HEAP_GROWING_PERCENT_LARGE_YOUNG / 100 with V8's own young generation or one above MAX_SEMI_SPACE_MIB_FOR_CAP", () => {
    const percent = (execArgv: string[], nodeOptions: string) => limitHeapGrowth({ execArgv, nodeOptions, setFlags: () => undefined });
    expect(HEAP_GROWING_PERCENT_LARGE_YOUNG).to.be.above(HEAP_GROWING_PERCENT);
    expect(percent([], ''), 'no flag: 16 MiB').to.equal(HEAP_GROWING_PERCENT_LARGE_YOUNG);
    expect(percent([], `--max-semi-space-size=${MAX_SEMI_SPACE_MIB_FOR_CAP}`)).to.equal(HEAP_GROWING_PERCENT);
    expect(percent([], `--max-semi-space-size=${MAX_SEMI_SPACE_MIB_FOR_CAP * 2}`)).to.equal(HEAP_GROWING_PERCENT_LARGE_YOUNG);
    expect(percent([], '--inspect  --max_semi_space_size 2 --max-old-space-size=512'), 'NODE_OPTIONS, underscores, a separate value').to.equal(
      HEAP_GROWING_PERCENT,
    );
    // Node hands V8 its command line after NODE_OPTIONS: the command line's value wins, and the last of several.
    expect(percent(['--max-semi-space-size=16'], '--max-semi-space-size=4'), 'command line over NODE_OPTIONS').to.equal(HEAP_GROWING_PERCENT_LARGE_YOUNG);
    expect(percent(['--max-semi-space-size=16', '--max-semi-space-size=4'], '')).to.equal(HEAP_GROWING_PERCENT);
    expect(percent(['--max-semi-space-size=abc'], '--max-semi-space-size=4'), 'an unreadable value is passed over').to.equal(HEAP_GROWING_PERCENT);
  });

  it('reads the young generation from the flags node was started with', () => {
    expect(semiSpaceMiB(['--max-semi-space-size', '8'], '--max-semi-space-size=2')).to.equal(8);
    expect(semiSpaceMiB([], '--max-semi-space-size=2')).to.equal(2);
    expect(semiSpaceMiB(['--max-old-space-size=512'], '')).to.equal(16);
  });

  it('keeps the heap of a process churning through short-lived objects well below what V8 lets it grow to', () => {
    const limited = peakMb('limit');
    const unlimited = peakMb('default');
    expect(limited, `${limited.toFixed(0)} MB with the limit, ${unlimited.toFixed(0)} MB without`).to.be.below(unlimited * 0.7);
  });
});
