/** The charts' geometry, apart from the markup, and the markup's accessible names. */
import { expect } from 'chai';
import { barChart, columnChart, groupedColumns, horizontalBars, niceCeiling, scaleLength } from '../../src/http/dashboard/views/charts.js';

describe('dashboard charts', () => {
  it('rounds an axis up to 1, 2 or 5 times a power of ten', () => {
    expect([0, 1, 2, 3, 7, 10, 11, 49, 50, 51, 999, 1001].map(niceCeiling)).to.deep.equal([1, 1, 2, 5, 10, 10, 20, 50, 50, 100, 1000, 2000]);
  });

  it('scales values onto a length, never negative and never past the end', () => {
    expect(scaleLength(5, 10, 300)).to.equal(150);
    expect(scaleLength(0, 10, 300)).to.equal(0);
    expect(scaleLength(-3, 10, 300)).to.equal(0);
    expect(scaleLength(20, 10, 300)).to.equal(300);
    expect(scaleLength(5, 0, 300)).to.equal(0);
  });

  it('lays horizontal bars out top to bottom on a shared axis', () => {
    const bars = horizontalBars([4, 10, 0], { left: 90, length: 300, barHeight: 20, gap: 10 });
    expect(bars).to.deep.equal([
      { x: 90, y: 0, width: 120, height: 20 },
      { x: 90, y: 30, width: 300, height: 20 },
      { x: 90, y: 60, width: 0, height: 20 },
    ]);
  });

  it('lays grouped columns out left to right, growing up from the baseline', () => {
    const { columns, ceiling } = groupedColumns(
      [
        [2, 1],
        [0, 4],
      ],
      { left: 40, baseline: 170, height: 160, groupWidth: 52, columnWidth: 16 },
    );
    expect(ceiling).to.equal(5);
    expect(columns[0]).to.deep.equal([
      { x: 50, y: 106, width: 16, height: 64 },
      { x: 66, y: 138, width: 16, height: 32 },
    ]);
    expect(columns[1]![0]).to.deep.equal({ x: 102, y: 170, width: 16, height: 0 });
    expect(columns[1]![1]).to.deep.equal({ x: 118, y: 42, width: 16, height: 128 });
  });

  it('draws charts as named images whose description carries the numbers, with text escaped', () => {
    const bars = barChart('c1', 'Open risks', '3 open <risks>', [{ label: 'High', value: 3, kind: 'HIGH' }]).markup;
    expect(bars).to.match(/^<svg class="chart" role="img" aria-labelledby="c1-title c1-desc"/);
    expect(bars).to.include('<title id="c1-title">Open risks</title>');
    expect(bars).to.include('<desc id="c1-desc">3 open &lt;risks&gt;</desc>');
    expect(bars).to.include('class="bar bar-high"');
    const columns = columnChart('c2', 'Trend', 'flat', ['opened', 'closed'], [{ label: '11-23', values: [0, 0] }]).markup;
    expect(columns).to.include('<title id="c2-title">Trend</title>');
    expect(columns.match(/<rect /g)).to.have.length(2);
  });
});
