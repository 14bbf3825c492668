/** The PDF report's front matter: contents with page numbers, summary tiles, vector charts and the targets' health table. */
import { THREAT_LEVELS } from '../../domain/risks/finding.js';
import type { ReportModel } from '../../domain/reports/report-model.js';
import { NOT_SCANNED_YET } from '../../domain/targets/health-score.js';
import { GRADE_COLORS, LEVEL_COLORS, barFractions, chartsOf, type Chart } from '../charts.js';
import { targetName } from '../text.js';
import { CONTENT_WIDTH, FONTS, INK, PAGE, type PdfFlow } from './pdf-flow.js';

export interface ContentsEntry {
  anchor: string;
  title: string;
  level: 0 | 1;
}

/**
 * One line per entry with its page number, each a link to its place;
 * yields after each line, as healthTableBlocks does after each row.
 */
export function* contentsBlocks(flow: PdfFlow, entries: readonly ContentsEntry[], anchorPages: () => ReadonlyMap<string, number>): Generator<void> {
  for (const entry of entries) {
    const size = entry.level === 0 ? 11 : 9.5;
    const font = entry.level === 0 ? FONTS.bold : FONTS.regular;
    const indent = entry.level === 0 ? 0 : 14;
    const title = flow.fit(entry.title, CONTENT_WIDTH - indent - 50, font, size);
    flow.push({
      height: size * 1.55,
      draw: (y) => {
        const page = String(anchorPages().get(entry.anchor) ?? '');
        flow.drawLine(title, PAGE.left + indent, y, font, size, INK.text);
        flow.drawLine(page, PAGE.right - flow.width(page, font, size), y, font, size, INK.text);
        flow.doc.goTo(PAGE.left + indent, y - 1, CONTENT_WIDTH - indent, size * 1.3, entry.anchor);
      },
    });
    yield;
  }
}

/** Five coloured tiles with the count of each threat level, then the counts by status. */
export function summaryTilesBlock(flow: PdfFlow, report: Pick<ReportModel, 'summary'>): void {
  const { summary } = report;
  const gap = 8;
  const width = (CONTENT_WIDTH - gap * 4) / 5;
  flow.push({
    height: 62,
    draw: (y) => {
      THREAT_LEVELS.forEach((level, index) => {
        const x = PAGE.left + index * (width + gap);
        flow.fill((doc) => doc.roundedRect(x, y + 4, width, 50, 4), LEVEL_COLORS[level]!);
        flow.drawLine(String(summary.byThreatLevel[level]), x + 8, y + 10, FONTS.bold, 18, '#ffffff');
        flow.drawLine(level, x + 8, y + 36, FONTS.bold, 8, '#ffffff');
      });
    },
  });
  const rows: Array<[string, number]> = [
    ['Open', summary.byStatus.OPEN],
    ['Closed', summary.byStatus.CLOSED],
    ['Accepted (false positive or by design)', summary.accepted],
    ['Total risks in this report', summary.total],
  ];
  for (const [label, value] of rows) {
    flow.push({
      height: 16,
      draw: (y) => {
        flow.drawLine(label, PAGE.left, y + 2, FONTS.regular, 10, INK.text);
        flow.drawLine(String(value), PAGE.left + 260, y + 2, FONTS.bold, 10, INK.text);
      },
    });
  }
  flow.space(12);
}

function drawChart(flow: PdfFlow, chart: Chart, x: number, y: number, width: number): void {
  const { doc } = flow;
  flow.drawLine(chart.title, x, y, FONTS.bold, 10, INK.text);
  const fractions = barFractions(chart);
  const barArea = width - 110;
  chart.bars.forEach((bar, index) => {
    const top = y + 20 + index * 22;
    flow.drawLine(bar.label, x, top + 4, FONTS.regular, 9, INK.text);
    const length = Math.max(fractions[index]! * barArea, bar.value > 0 ? 2 : 0);
    doc
      .moveTo(x + 70, top)
      .lineTo(x + 70, top + 18)
      .lineWidth(0.5)
      .strokeColor(INK.rule)
      .stroke();
    if (length > 0) flow.fill((pdf) => pdf.rect(x + 70, top + 2, length, 14), bar.color);
    flow.drawLine(String(bar.value), x + 74 + length, top + 4, FONTS.regular, 9, INK.text);
  });
}

/** The two bar charts side by side, drawn as vector paths. */
export function chartsBlock(flow: PdfFlow, report: Pick<ReportModel, 'summary'>): void {
  const charts = chartsOf(report);
  const width = (CONTENT_WIDTH - 24) / 2;
  const bars = Math.max(...charts.map((chart) => chart.bars.length));
  flow.push({
    height: 40 + bars * 22,
    draw: (y) => charts.forEach((chart, index) => drawChart(flow, chart, PAGE.left + index * (width + 24), y + 4, width)),
  });
  flow.space(8);
}

/**
 * One row per target, the worst first: name, address, tags, score and a
 * coloured grade. Yields after each row so that the renderer places (and
 * draws) the table a few rows a step: a scan of 400 targets drew its table
 * and its 800-line contents in one step of 57-77 ms (bench/scale.ts).
 */
export function* healthTableBlocks(flow: PdfFlow, report: Pick<ReportModel, 'targets'>): Generator<void> {
  if (report.targets.length === 0) {
    flow.text('The filters select no targets.', { font: FONTS.italic, size: 10 });
    return;
  }
  const header = { height: 18, keepWithNext: true, draw: (y: number) => tableRow(flow, y, ['Target', 'Tags', 'Score', 'Grade'], FONTS.bold) };
  flow.push(header);
  for (const target of report.targets) {
    const name = target.label === '' ? target.target : `${targetName(target)} (${target.target})`;
    flow.push({
      height: 16,
      draw: (y) => {
        const scanned = target.lastScannedAt !== null;
        tableRow(flow, y, [name, target.tags.join(', '), scanned ? String(target.healthScore.score) : '', ''], FONTS.regular);
        // Never scanned: the words span the score and grade columns instead of a perfect score nobody measured.
        if (!scanned)
          flow.drawLine(
            flow.fit(NOT_SCANNED_YET, COLUMN_WIDTHS[2]! + COLUMN_WIDTHS[3]!, FONTS.regular, 9),
            PAGE.left + COLUMNS[2]!,
            y + 3,
            FONTS.regular,
            9,
            INK.muted,
          );
        else flow.badge(target.healthScore.grade, PAGE.left + 455, y + 1, GRADE_COLORS[target.healthScore.grade]!, 8);
      },
    });
    yield;
  }
}

const COLUMNS = [0, 300, 405, 455];
const COLUMN_WIDTHS = [292, 97, 45, 40];

function tableRow(flow: PdfFlow, y: number, cells: readonly string[], font: string): void {
  cells.forEach((cell, index) => {
    if (cell !== '') flow.drawLine(flow.fit(cell, COLUMN_WIDTHS[index]!, font, 9), PAGE.left + COLUMNS[index]!, y + 3, font, 9, INK.text);
  });
  flow.doc
    .moveTo(PAGE.left, y + 15)
    .lineTo(PAGE.right, y + 15)
    .lineWidth(0.3)
    .strokeColor(INK.rule)
    .stroke();
}
