/** Small text helpers the report renderers share. */
import type { ReportTarget } from '../domain/reports/snapshot.js';

/** An ISO time as a reader wants it: "2026-11-25 09:30 UTC". */
export function displayTime(iso: string): string {
  return iso.replace('T', ' ').replace(/:\d\d(\.\d+)?Z$/, ' UTC');
}

/** The label when the target has one, else its address. */
export function targetName(target: ReportTarget): string {
  return target.label === '' ? target.target : target.label;
}
