/**
 * Charts drawn on the server as inline SVG (the CSP allows no scripts, and
 * none are needed). The geometry is plain arithmetic in pure functions, tested
 * apart from the markup. Each chart is an image with a title and a one-line
 * description; the page beside it carries the same numbers as a table, the
 * text equivalent that screen readers and copy-paste use.
 */
import { html, type SafeHtml } from '../../../app/present/html.js';

export interface Rect {
  x: number;
  y: number;
  width: number;
  height: number;
}

/** The smallest 1, 2 or 5 times a power of ten at or above `max` (at least 1), so axes read in round numbers. */
export function niceCeiling(max: number): number {
  if (!(max > 1)) return 1;
  const power = 10 ** Math.floor(Math.log10(max));
  return [1, 2, 5, 10].map((step) => step * power).find((candidate) => candidate >= max)!;
}

/** `value` as a length on an axis of `length` that ends at `ceiling`; never negative, never past the end. */
export function scaleLength(value: number, ceiling: number, length: number): number {
  if (ceiling <= 0 || value <= 0) return 0;
  return round((Math.min(value, ceiling) / ceiling) * length);
}

export interface BarFrame {
  /** Where the bars start (after the labels) and how long the longest may be. */
  left: number;
  length: number;
  barHeight: number;
  gap: number;
}

/** One horizontal bar per value, top to bottom, on a shared axis ending at niceCeiling of the largest value. */
export function horizontalBars(values: readonly number[], frame: BarFrame): Rect[] {
  const ceiling = niceCeiling(Math.max(0, ...values));
  return values.map((value, index) => ({
    x: frame.left,
    y: index * (frame.barHeight + frame.gap),
    width: scaleLength(value, ceiling, frame.length),
    height: frame.barHeight,
  }));
}

export interface ColumnFrame {
  left: number;
  /** The baseline's y; columns grow upwards from it. */
  baseline: number;
  height: number;
  groupWidth: number;
  columnWidth: number;
}

/** Side-by-side columns per group (one per series), left to right, on a shared axis; returns the columns and the axis's ceiling. */
export function groupedColumns(groups: ReadonlyArray<readonly number[]>, frame: ColumnFrame): { columns: Rect[][]; ceiling: number } {
  const ceiling = niceCeiling(Math.max(0, ...groups.flat()));
  const columns = groups.map((values, group) => {
    const inner = (frame.groupWidth - values.length * frame.columnWidth) / 2;
    return values.map((value, series) => {
      const height = scaleLength(value, ceiling, frame.height);
      return {
        x: round(frame.left + group * frame.groupWidth + inner + series * frame.columnWidth),
        y: round(frame.baseline - height),
        width: frame.columnWidth,
        height,
      };
    });
  });
  return { columns, ceiling };
}

function round(value: number): number {
  return Math.round(value * 10) / 10;
}

export interface Bar {
  label: string;
  value: number;
  /** A class suffix that colours the bar (bar-critical, ...). */
  kind: string;
}

const BAR = { labelWidth: 90, length: 300, barHeight: 22, gap: 10, valueWidth: 60 };

/** Horizontal bars with their labels and values, described by `title` and `description`. */
export function barChart(id: string, title: string, description: string, bars: readonly Bar[]): SafeHtml {
  const rects = horizontalBars(
    bars.map((bar) => bar.value),
    { left: BAR.labelWidth, length: BAR.length, barHeight: BAR.barHeight, gap: BAR.gap },
  );
  const width = BAR.labelWidth + BAR.length + BAR.valueWidth;
  const height = bars.length * (BAR.barHeight + BAR.gap) - BAR.gap;
  const middle = BAR.barHeight / 2 + 5;
  return html`<svg class="chart" role="img" aria-labelledby="${id}-title ${id}-desc" viewBox="0 0 ${width} ${height}" width="${width}" height="${height}">
  <title id="${id}-title">${title}</title>
  <desc id="${id}-desc">${description}</desc>
  ${bars.map((bar, index) => {
    const rect = rects[index]!;
    return html`<g>
    <text class="chart-label" x="0" y="${rect.y + middle}">${bar.label}</text>
    <rect class="bar bar-${bar.kind.toLowerCase()}" x="${rect.x}" y="${rect.y}" width="${Math.max(rect.width, 1)}" height="${rect.height}" rx="3"></rect>
    <text class="chart-value" x="${rect.x + rect.width + 6}" y="${rect.y + middle}">${bar.value}</text>
  </g>`;
  })}
</svg>`;
}

export interface ColumnGroup {
  label: string;
  values: readonly number[];
}

const COLUMNS = { left: 40, top: 10, height: 160, groupWidth: 52, columnWidth: 16, labelHeight: 24 };

/** Grouped columns (one per series, coloured by `seriesKinds`) with a y axis and a label under each group. */
export function columnChart(id: string, title: string, description: string, seriesKinds: readonly string[], groups: readonly ColumnGroup[]): SafeHtml {
  const baseline = COLUMNS.top + COLUMNS.height;
  const { columns, ceiling } = groupedColumns(
    groups.map((group) => group.values),
    { left: COLUMNS.left, baseline, height: COLUMNS.height, groupWidth: COLUMNS.groupWidth, columnWidth: COLUMNS.columnWidth },
  );
  const width = COLUMNS.left + groups.length * COLUMNS.groupWidth;
  const height = baseline + COLUMNS.labelHeight;
  const ticks = [0, ceiling / 2, ceiling].filter((tick) => Number.isInteger(tick));
  return html`<svg class="chart" role="img" aria-labelledby="${id}-title ${id}-desc" viewBox="0 0 ${width} ${height}" width="${width}" height="${height}">
  <title id="${id}-title">${title}</title>
  <desc id="${id}-desc">${description}</desc>
  ${ticks.map((tick) => {
    const y = baseline - scaleLength(tick, ceiling, COLUMNS.height);
    return html`<g><line class="chart-grid" x1="${COLUMNS.left}" x2="${width}" y1="${y}" y2="${y}"></line><text class="chart-tick" x="${COLUMNS.left - 6}" y="${y + 4}" text-anchor="end">${tick}</text></g>`;
  })}
  ${groups.map(
    (group, index) => html`<g>
    ${columns[index]!.map((rect, series) => html`<rect class="bar bar-${seriesKinds[series] ?? 'info'}" x="${rect.x}" y="${rect.y}" width="${rect.width}" height="${rect.height}"></rect>`)}
    <text class="chart-tick" x="${COLUMNS.left + index * COLUMNS.groupWidth + COLUMNS.groupWidth / 2}" y="${baseline + 16}" text-anchor="middle">${group.label}</text>
  </g>`,
  )}
</svg>`;
}
