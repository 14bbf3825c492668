/**
 * A target no scan has looked at keeps the starting score of 100; reports and
 * the dashboard must say "not scanned yet" instead of calling it "100, grade A".
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { expect } from 'chai';
import { buildReportModel } from '../../src/domain/reports/report-model.js';
import type { ReportSnapshot } from '../../src/domain/reports/snapshot.js';
import { gradeBadge } from '../../src/http/dashboard/views/components.js';
import { renderHtmlReport } from '../../src/reports/html-report.js';
import { renderPdfReport } from '../../src/reports/pdf/pdf-report.js';
import { reportSnapshot } from '../support/report-snapshot.js';

/** The sample snapshot with its 203.0.113.7 target (score 100, grade A) never scanned and the other scanned. */
function snapshotWithUnscannedTarget(): ReportSnapshot {
  const base = reportSnapshot();
  const targets = base.targets.map((target) => ({ ...target, lastScannedAt: target.id === 't-db' ? null : '2026-11-24T08:00:00.000Z' }));
  return { ...base, targets };
}

async function rendered(render: (out: PassThrough) => Promise<void>): Promise<Buffer> {
  const out = new PassThrough();
  const chunks: Buffer[] = [];
  out.on('data', (chunk: Buffer) => chunks.push(chunk));
  await render(out);
  return Buffer.concat(chunks);
}

describe('targets never scanned', () => {
  const model = buildReportModel(snapshotWithUnscannedTarget());

  it('the HTML report shows "not scanned yet" for them, and the score and grade of scanned targets', async () => {
    const page = (await rendered((out) => renderHtmlReport(model, out))).toString('utf8');
    const unscannedRow = page.split('<tr>').find((row) => row.startsWith('<th scope="row">') && row.includes('203.0.113.7'))!;
    expect(unscannedRow).to.contain('not scanned yet');
    expect(unscannedRow).not.to.match(/grade-a|>100</);
    expect(page).to.contain('Health not scanned yet');
    const scannedRow = page.split('<tr>').find((row) => row.startsWith('<th scope="row">') && row.includes('shop.example.com'))!;
    expect(scannedRow).to.contain('<td>33</td>');
  });

  it('the PDF report shows "not scanned yet" for them (read back with pdftotext)', async () => {
    const pdf = await rendered((out) => renderPdfReport(model, out));
    const dir = join(process.cwd(), 'test-artifacts', 'reports');
    mkdirSync(dir, { recursive: true });
    const path = join(dir, 'unscanned-target.pdf');
    writeFileSync(path, pdf);
    const text = execFileSync('pdftotext', ['-layout', path, '-'], { encoding: 'utf8' });
    const unscannedLines = text.split('\n').filter((line) => line.includes('203.0.113.7'));
    expect(unscannedLines.length).to.be.greaterThan(0);
    expect(text).to.match(/203\.0\.113\.7\s+not scanned yet/);
    expect(text).to.contain('Health not scanned yet');
    expect(text).not.to.match(/203\.0\.113\.7\s+100/);
    expect(text).to.contain('Health 33, grade D');
  });

  it('the dashboard shows "not scanned yet" instead of a grade badge', () => {
    expect(gradeBadge(100, 'A', null).toString())
      .to.contain('not scanned yet')
      .and.not.contain('grade-a');
    expect(gradeBadge(33, 'D', '2026-11-24T08:00:00.000Z').toString())
      .to.contain('grade-d')
      .and.contain('33');
  });
});
