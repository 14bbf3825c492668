/**
 * The CSV report: RFC 4180 (CRLF line ends, fields quoted when they hold a
 * comma, quote or line break), UTF-8, a header row, one row per risk in the
 * report's order. Cells a spreadsheet would run as a formula are neutralised
 * as OWASP recommends for CSV injection: a leading apostrophe makes them text.
 */
import { Readable, type Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { stringify } from 'csv-stringify';
import { evidenceLine, locationOf } from '../domain/reports/evidence.js';
import { cvesOf, type ReportModel } from '../domain/reports/report-model.js';

export const CSV_COLUMNS = [
  'risk_id',
  'target_id',
  'target',
  'target_label',
  'tags',
  'scan_type',
  'title',
  'threat_level',
  'cvss',
  'status',
  'accepted',
  'first_detected_at',
  'last_detected_at',
  'cves',
  'location',
  'description',
  'solution',
  'evidence',
] as const;

/** Characters that make a spreadsheet treat a cell as a formula (OWASP, CSV injection). */
const FORMULA_START = /^[=+\-@\t\r]/;

export function neutraliseFormula(cell: string): string {
  return FORMULA_START.test(cell) ? `'${cell}` : cell;
}

function* rowsOf(report: ReportModel): Generator<string[]> {
  for (const section of report.sections) {
    const { target } = section;
    for (const risk of section.risks) {
      const definition = risk.definition;
      const row = [
        risk.id,
        target.id,
        target.target,
        target.label,
        target.tags.join('; '),
        definition.scan_type,
        definition.title,
        definition.threat_level,
        definition.cvss,
        risk.status,
        risk.isAccepted ? 'yes' : 'no',
        risk.firstDetectedAt,
        risk.lastDetectedAt,
        cvesOf(risk).join('; '),
        locationOf(risk, target.target),
        definition.description,
        definition.solution,
        evidenceLine(risk),
      ];
      yield row.map(neutraliseFormula);
    }
  }
}

export async function renderCsvReport(report: ReportModel, out: Writable): Promise<void> {
  const stringifier = stringify({ header: true, columns: [...CSV_COLUMNS], record_delimiter: '\r\n', quoted_match: /[\r\n",]/ });
  await pipeline(Readable.from(rowsOf(report)), stringifier, out);
}
