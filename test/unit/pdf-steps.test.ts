/**
 * The PDFs are laid out in small steps: renderPdfDocument yields to the event
 * loop only between the steps of a plan's layOut, so a step that lays out a
 * whole table holds the loop for as long as that table takes to place and
 * draw (57-77 ms for a scan of 400 targets, bench/pdf-turns.ts). Here every
 * step of both plans holds at most one row, contents line, cover line or
 * risk, however many targets there are.
 */
import { expect } from 'chai';
import PDFDocument from 'pdfkit';
import { buildReportModel } from '../../src/domain/reports/report-model.js';
import { buildScanPdfModel } from '../../src/domain/reports/scan-pdf-model.js';
import type { ReportRisk, ReportTarget } from '../../src/domain/reports/snapshot.js';
import type { PdfDocumentPlan } from '../../src/reports/pdf/pdf-document.js';
import { PdfFlow } from '../../src/reports/pdf/pdf-flow.js';
import { reportPdfPlan } from '../../src/reports/pdf/pdf-report.js';
import { scanPdfPlan } from '../../src/reports/pdf/scan-pdf.js';
import { reportSnapshot } from '../support/report-snapshot.js';

const TARGETS = 1500;

function manyTargets(): { targets: ReportTarget[]; risks: ReportRisk[] } {
  const targets = Array.from({ length: TARGETS }, (_, index) => ({
    id: `t-${index}`,
    target: `10.0.${index >> 8}.${index & 255}`,
    label: index % 2 === 0 ? `host ${index}` : '',
    tags: ['scale'],
    healthScore: { score: 90, grade: 'A' as const },
    lastScannedAt: '2026-11-01T00:00:00.000Z',
  }));
  const base = reportSnapshot().risks[2]!;
  // One risk on each of 300 targets: as many contents lines as risks.
  const risks = Array.from({ length: 300 }, (_, index) => ({ ...base, id: `r-${index}`, targetId: `t-${index * 5}` }));
  return { targets, risks };
}

/** The most blocks one step of the plan's layOut leaves for the renderer to place, and how many steps there were. */
function largestStep(plan: PdfDocumentPlan): { blocks: number; steps: number } {
  const flow = new PdfFlow(new PDFDocument({ autoFirstPage: false }));
  let blocks = 0;
  let steps = 0;
  for (const _ of plan.layOut(flow, () => new Map())) {
    blocks = Math.max(blocks, flow.blocks.length);
    steps++;
    flow.blocks.length = 0;
  }
  return { blocks: Math.max(blocks, flow.blocks.length), steps };
}

describe('PDF layout steps', () => {
  it("a scan's PDF of 1,500 targets is laid out a cover line, contents line, table row or risk a step", () => {
    const { targets, risks } = manyTargets();
    const model = buildScanPdfModel({
      scan: { id: 's-1', name: 'weekly', type: 'NMAP', createdAt: '2026-11-01T00:00:00.000Z', finishedAt: '2026-11-01T01:00:00.000Z' },
      accountName: 'acme',
      createdAt: '2026-11-01T02:00:00.000Z',
      targets,
      skipped: [],
      risks: { newOpen: risks, stillOpen: [], closed: [] },
      counts: { newOpen: 40_020, stillOpen: 0, closed: 0 },
      maxRisks: 300,
    });
    const { blocks, steps } = largestStep(scanPdfPlan(model));
    // Cover lines, contents lines and table rows: at least one step each.
    expect(steps).to.be.at.least(TARGETS * 2 + 300);
    // One risk's blocks (its title, facts and wrapped text) and the heading before it, never a page's worth.
    expect(blocks).to.be.below(40);
  });

  it('a report of 1,500 targets is laid out a contents line, table row or risk a step', () => {
    const { targets, risks } = manyTargets();
    const model = buildReportModel({ ...reportSnapshot(), targets, risks, matchedRisks: risks.length });
    const { blocks, steps } = largestStep(reportPdfPlan(model));
    expect(steps).to.be.at.least(TARGETS + 300);
    expect(blocks).to.be.below(40);
  });
});
