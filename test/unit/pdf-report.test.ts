/**
 * The PDF renderer gathers each page's content in one buffer instead of
 * letting pdfkit keep every operator as its own small array (the memory
 * aim of bench/reports.ts), and draws each line through pdfkit's _fragment
 * instead of doc.text (its time aim). These tests render a report of many
 * pages both ways and require the same bytes, and read each page back with
 * pdftotext to check that what a page shows landed on that page.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { expect } from 'chai';
import { buildReportModel, type ReportModel } from '../../src/domain/reports/report-model.js';
import type { ReportSnapshot } from '../../src/domain/reports/snapshot.js';
import { renderPdfReport, type PdfRenderOptions } from '../../src/reports/pdf/pdf-report.js';
import { HOSTILE, riskOf } from '../support/report-data.js';
import { reportSnapshot } from '../support/report-snapshot.js';

const ARTIFACTS = join(process.cwd(), 'test-artifacts', 'reports');
const LEVELS = ['CRITICAL', 'HIGH', 'MEDIUM', 'LOW', 'INFO'] as const;

/** 3 targets, 90 risks with paragraphs long enough to run over many pages, hostile text among them. */
function manyPagesSnapshot(): ReportSnapshot {
  const base = reportSnapshot();
  const targets = [
    ...base.targets,
    { id: 't-api', target: 'https://api.example.com', label: 'API', tags: ['prod'], healthScore: { score: 61, grade: 'C' as const } },
  ];
  const risks = Array.from({ length: 90 }, (_, index) => {
    const risk = riskOf({
      accountId: 'a',
      targetId: targets[index % targets.length]!.id,
      title: index % 9 === 0 ? HOSTILE.title : `Finding number ${index} on the login form`,
      threatLevel: LEVELS[index % LEVELS.length]!,
      cvss: `${(index % 10) + 0.5}`,
      status: index % 4 === 0 ? 'CLOSED' : 'OPEN',
      accepted: index % 7 === 0,
      description: `${index % 9 === 0 ? HOSTILE.description : ''} ${'The server answers with a banner that names its version, and that version has known flaws. '.repeat(6)}`,
      solution: 'Upgrade to the fixed version and restart the service. '.repeat(3),
      additionalInfo: { cves: [`CVE-2026-${1000 + index}`], references: [`https://nvd.example/${index}`], port: 443, evidence: `Server: demo/${index}` },
    });
    return {
      id: risk.id,
      targetId: risk.targetId,
      status: risk.status,
      isAccepted: risk.isAccepted,
      firstDetectedAt: risk.firstDetectedAt,
      lastDetectedAt: risk.lastDetectedAt,
      definition: risk.definition,
    };
  });
  return { ...base, targets, risks, matchedRisks: risks.length };
}

async function render(model: ReportModel, options: PdfRenderOptions): Promise<Buffer> {
  const out = new PassThrough();
  const chunks: Buffer[] = [];
  out.on('data', (chunk: Buffer) => chunks.push(chunk));
  await renderPdfReport(model, out, options);
  return Buffer.concat(chunks);
}

function pageText(path: string, page: number): string {
  return execFileSync('pdftotext', ['-layout', '-f', String(page), '-l', String(page), path, '-'], { encoding: 'utf8' });
}

describe('PDF report renderer', () => {
  const model = buildReportModel(manyPagesSnapshot());
  let gathered: Buffer;
  let path: string;
  let pages: number;

  before(async () => {
    gathered = await render(model, {});
    mkdirSync(ARTIFACTS, { recursive: true });
    path = join(ARTIFACTS, 'many-pages.pdf');
    writeFileSync(path, gathered);
    pages = Number(/Pages:\s+(\d+)/.exec(execFileSync('pdfinfo', [path], { encoding: 'utf8' }))![1]);
  });

  it('writes the same bytes as plain pdfkit (each page kept by pdfkit, each line through doc.text)', async () => {
    const own = await render(model, { plainPdfkit: true });
    expect(pages).to.be.greaterThan(10);
    expect(gathered.length).to.equal(own.length);
    expect(gathered.equals(own)).to.equal(true);
  });

  it('puts each page its own frame and its own findings', () => {
    const seen = new Set<string>();
    for (let page = 1; page <= pages; page++) {
      const text = pageText(path, page);
      expect(text, `page ${page}`).to.include(`Page ${page} of ${pages}`);
      expect(text.match(/Page \d+ of \d+/g), `page ${page}`).to.have.length(1);
      for (const match of text.matchAll(/CVE-2026-(\d+)/g)) seen.add(match[1]!);
    }
    // Every risk's CVE line is drawn once somewhere in the document.
    expect(seen.size).to.equal(90);
  });
});
