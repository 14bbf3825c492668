/**
 * One measurement of bench/reports.ts in its own process, so that its peak
 * memory is its own: `vigil <PDF|HTML|CSV>` creates a report through the
 * reports service on the seeded data directory (snapshot, rendering, files);
 * `bare` loads the same risks and writes the same text with pdfkit's own
 * text layout, with no Vigil code involved. Prints one JSON line.
 */
import { createWriteStream, statSync } from 'node:fs';
import { join } from 'node:path';
import { finished } from 'node:stream/promises';
import PDFDocument from 'pdfkit';
import { loadSettings } from '../../src/config/settings.js';
import { composeCore } from '../../src/main/composition-root.js';
import { peakRssMb as ownPeakRssMb } from '../../test/support/peak-rss.js';

const [mode, dataDir, format] = process.argv.slice(2) as [string, string, 'PDF' | 'HTML' | 'CSV' | undefined];

interface Row {
  target: string;
  label: string;
  definition: string;
  first_detected_at: string;
  last_detected_at: string;
  status: string;
}

async function bare(rows: Row[], out: string): Promise<void> {
  const doc = new PDFDocument({ size: 'A4', margin: 50 });
  const stream = createWriteStream(out);
  doc.pipe(stream);
  let previous = '';
  for (const row of rows) {
    const definition = JSON.parse(row.definition) as {
      title: string;
      threat_level: string;
      cvss: string;
      scan_type: string;
      description: string;
      solution: string;
      additional_info: Record<string, unknown>;
    };
    if (row.target !== previous)
      doc
        .font('Helvetica-Bold')
        .fontSize(14)
        .text(row.label || row.target);
    previous = row.target;
    doc.font('Helvetica-Bold').fontSize(11).text(`${definition.threat_level} ${definition.title}`);
    doc
      .font('Helvetica')
      .fontSize(8.5)
      .text(`CVSS ${definition.cvss} ${row.status} ${definition.scan_type} first detected ${row.first_detected_at} last detected ${row.last_detected_at}`);
    doc.fontSize(9.5).text(definition.description).text(definition.solution);
    doc.fontSize(8.5).text(((definition.additional_info.references as string[]) ?? []).join('\n'));
    doc
      .font('Courier')
      .fontSize(8)
      .text(`evidence: ${String(definition.additional_info.evidence)}`);
  }
  doc.end();
  await finished(stream);
}

async function main(): Promise<void> {
  const core = composeCore(loadSettings({ VIGIL_DATA_DIR: dataDir, LOG_LEVEL: 'silent' }));
  const account = core.accountRepository.findByName('bench')!;
  const baselineRssMb = process.memoryUsage().rss / 1e6;
  const cpuBefore = process.cpuUsage();
  let seconds: number;
  let bytes: number;
  if (mode === 'bare') {
    const rows = core.db
      .prepare(
        'SELECT t.target, t.label, r.definition, r.first_detected_at, r.last_detected_at, r.status FROM risks r JOIN targets t ON t.id = r.target_id ORDER BY t.seq, r.seq',
      )
      .all() as Row[];
    const out = join(dataDir, 'bare.pdf');
    const started = performance.now();
    await bare(rows, out);
    seconds = (performance.now() - started) / 1000;
    bytes = statSync(out).size;
  } else {
    const started = performance.now();
    const id = await core.reports.create(account, { report_format: format! });
    seconds = (performance.now() - started) / 1000;
    bytes = (await core.reports.download(account, id, {})).size;
  }
  const peakRssMb = (ownPeakRssMb() * 1024 * 1024) / 1e6;
  // CPU time of the whole process (its threads too): steadier than wall time on a shared machine.
  const cpu = process.cpuUsage(cpuBefore);
  const cpuSeconds = (cpu.user + cpu.system) / 1e6;
  console.log(JSON.stringify({ mode: mode === 'bare' ? 'bare PDF' : `Vigil ${format}`, seconds, cpuSeconds, bytes, peakRssMb, baselineRssMb }));
  core.db.close();
}

void main();
