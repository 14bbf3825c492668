/**
 * The blocks a Vigil PDF is made of, shared by the report (pdf-report.ts)
 * and the scan PDF (scan-pdf.ts): headings, a target's section heading, and
 * a risk with its title, facts, description, solution and evidence.
 */
import { THREAT_LEVELS } from '../../domain/risks/finding.js';
import { cvesOf, cvssText, evidenceOf, referencesOf, type ReportSection } from '../../domain/reports/report-model.js';
import type { ReportRisk } from '../../domain/reports/snapshot.js';
import { healthText } from '../../domain/targets/health-score.js';
import { LEVEL_COLORS } from '../charts.js';
import { displayTime, targetName } from '../text.js';
import { wrapText } from './layout.js';
import { CONTENT_WIDTH, FONTS, INK, PAGE, PdfFlow, pdfText } from './pdf-flow.js';

export function heading(flow: PdfFlow, text: string, anchor: string | undefined, options: { size?: number; breakBefore?: boolean } = {}): void {
  const size = options.size ?? 18;
  const line = flow.fit(text, CONTENT_WIDTH, FONTS.bold, size);
  flow.push({
    height: size * 1.6,
    keepWithNext: true,
    breakBefore: options.breakBefore,
    anchor,
    draw: (y) => flow.drawLine(line, PAGE.left, y + size * 0.3, FONTS.bold, size, INK.text),
  });
}

/** The threat level badge, then the title wrapped beside it. */
function riskTitleBlocks(flow: PdfFlow, risk: ReportRisk): void {
  const level = risk.definition.threat_level;
  const indent = flow.width(level, FONTS.bold, 8) + 14;
  const lines = wrapText(pdfText(risk.definition.title), CONTENT_WIDTH - indent, (part) => flow.width(part, FONTS.bold, 11));
  lines.forEach((line, index) => {
    flow.push({
      height: index === 0 ? 18 : 14,
      keepWithNext: true,
      line: { ...line, x: PAGE.left + indent, font: FONTS.bold, size: 11, color: INK.text },
      draw: index === 0 ? (y) => flow.badge(level, PAGE.left, y, LEVEL_COLORS[level]!) : undefined,
    });
  });
}

export function riskBlocks(flow: PdfFlow, risk: ReportRisk): void {
  const definition = risk.definition;
  riskTitleBlocks(flow, risk);
  const status = `${risk.status === 'OPEN' ? 'Open' : 'Closed'}${risk.isAccepted ? ', accepted' : ''}`;
  flow.text(
    `CVSS ${cvssText(risk)}  ·  ${status}  ·  ${definition.scan_type}  ·  first detected ${displayTime(risk.firstDetectedAt)}  ·  last detected ${displayTime(risk.lastDetectedAt)}`,
    {
      size: 8.5,
      color: INK.muted,
      keepWithNext: true,
    },
  );
  const cves = cvesOf(risk);
  if (cves.length > 0) flow.text(cves.join(', '), { size: 8.5, color: INK.muted, keepWithNext: true });
  labelled(flow, 'Description', definition.description === '' ? 'None given by the scanner.' : definition.description);
  labelled(flow, 'Solution', definition.solution === '' ? 'None given by the scanner.' : definition.solution);
  const references = referencesOf(risk);
  if (references.length > 0) labelled(flow, 'References', references.join('\n'));
  const evidence = evidenceOf(risk);
  if (evidence.length > 0) {
    flow.text('Evidence', { font: FONTS.bold, size: 8.5, color: INK.muted, keepWithNext: true });
    for (const entry of evidence) flow.text(`${entry.label}: ${entry.value}`, { font: FONTS.mono, size: 8 });
  }
  flow.space(9);
}

function labelled(flow: PdfFlow, label: string, text: string): void {
  flow.text(label, { font: FONTS.bold, size: 8.5, color: INK.muted, keepWithNext: true });
  flow.text(text, { size: 9.5 });
}

export function sectionHeading(flow: PdfFlow, section: ReportSection, anchor: string): void {
  const { target } = section;
  heading(flow, targetName(target), anchor, { size: 14 });
  const counts = THREAT_LEVELS.filter((level) => section.byThreatLevel[level] > 0).map((level) => `${section.byThreatLevel[level]} ${level}`);
  const address = target.label === '' ? '' : `${target.target}  ·  `;
  const tags = target.tags.length === 0 ? '' : `  ·  tags ${target.tags.join(', ')}`;
  flow.text(`${address}Health ${healthText(target.healthScore, target.lastScannedAt)}${tags}  ·  ${counts.join(', ')}`, {
    size: 9,
    color: INK.muted,
    keepWithNext: true,
  });
  flow.rule();
}
