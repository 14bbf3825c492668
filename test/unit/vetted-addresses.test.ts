/** What runners hand the scanner definitions: targets, their checked addresses, and the targets a scanner reports it never reached. */
import { expect } from 'chai';
import { unscannedTargets } from '../../src/domain/risks/assign-findings.js';
import { scannerTargets } from '../../src/domain/scans/resolve-targets.js';
import type { ResolvedTarget } from '../../src/domain/scans/scan.js';

const resolved: ResolvedTarget[] = [
  { targetId: 't1', target: 'https://Shop.Example.com/cart', addresses: ['93.184.216.34'] },
  { targetId: 't2', target: 'shop.example.com', addresses: ['93.184.216.35'] },
  { targetId: 't3', target: '198.51.100.7', addresses: ['198.51.100.7'] },
];

describe('vetted addresses', () => {
  it('keeps the targets as stored and maps each host name (lower case) to every address checked for it', () => {
    expect(scannerTargets(resolved)).to.deep.equal({
      targets: ['https://Shop.Example.com/cart', 'shop.example.com', '198.51.100.7'],
      addresses: { 'shop.example.com': ['93.184.216.34', '93.184.216.35'], '198.51.100.7': ['198.51.100.7'] },
    });
  });

  describe('targets the scanner never reached', () => {
    // Findings counted per target: t3 yielded one.
    const byTarget = new Map<string, number>([
      ['t1', 0],
      ['t3', 1],
    ]);

    it("are skipped with the scanner's reason, matched by name or by checked address", () => {
      const skipped = unscannedTargets(
        resolved,
        [
          { host: '93.184.216.35', reason: 'sslyze could not connect' },
          { host: 'SHOP.example.com.', reason: 'could not resolve' },
        ],
        byTarget,
      );
      expect(skipped).to.deep.equal([
        { targetId: 't1', skippedReason: 'could not resolve' },
        // The first report that names it: its address here.
        { targetId: 't2', skippedReason: 'sslyze could not connect' },
      ]);
    });

    it('are not skipped when they yielded findings after all', () => {
      expect(unscannedTargets(resolved, [{ host: '198.51.100.7', reason: 'one address failed' }], byTarget)).to.deep.equal([]);
    });
  });
});
