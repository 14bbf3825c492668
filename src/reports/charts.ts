/**
 * The two charts of a report (risks by threat level, targets by health
 * grade) as data both renderers draw: SVG in HTML, vector paths in the PDF.
 */
import { THREAT_LEVELS } from '../domain/risks/finding.js';
import { HEALTH_GRADES } from '../domain/targets/health-score.js';
import type { ReportModel } from '../domain/reports/report-model.js';

export interface ChartBar {
  label: string;
  value: number;
  color: string;
}

export interface Chart {
  title: string;
  bars: ChartBar[];
}

/** Colours with at least 4.5:1 contrast against white text labels beside them, and distinct in grey print. */
export const LEVEL_COLORS: Readonly<Record<string, string>> = {
  CRITICAL: '#7a0019',
  HIGH: '#c0392b',
  MEDIUM: '#b35900',
  LOW: '#2c6e9b',
  INFO: '#5f6b76',
};

export const GRADE_COLORS: Readonly<Record<string, string>> = { A: '#1e7b3a', B: '#5b8c1a', C: '#b35900', D: '#c0392b', F: '#7a0019' };

/** The bar of targets no scan has looked at yet, grey: they have no grade. */
const NOT_SCANNED_COLOR = '#5f6b76';

export function chartsOf(report: Pick<ReportModel, 'summary'>): Chart[] {
  const { summary } = report;
  const grades = HEALTH_GRADES.map((grade) => ({ label: `Grade ${grade}`, value: summary.targetsByGrade[grade], color: GRADE_COLORS[grade]! }));
  const notScanned = summary.targetsNotScanned === 0 ? [] : [{ label: 'Not scanned', value: summary.targetsNotScanned, color: NOT_SCANNED_COLOR }];
  return [
    {
      title: 'Risks by threat level',
      bars: THREAT_LEVELS.map((level) => ({ label: level, value: summary.byThreatLevel[level], color: LEVEL_COLORS[level]! })),
    },
    { title: 'Targets by health grade', bars: [...grades, ...notScanned] },
  ];
}

/** Bar lengths as fractions of the longest bar; all zero when there is nothing to show. */
export function barFractions(chart: Chart): number[] {
  const max = Math.max(0, ...chart.bars.map((bar) => bar.value));
  return chart.bars.map((bar) => (max === 0 ? 0 : bar.value / max));
}
