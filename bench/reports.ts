/**
 * Benchmark: a report of 10,000 risks over 1,000 targets (issue 14), in
 * PDF, HTML and CSV through the reports service (snapshot, rendering,
 * files), side by side with a bare loop of pdfkit writing the same text
 * with its own text layout and no Vigil code. Each measurement runs in its
 * own process, so peak memory is its own. Aims: the PDF in under 10 s and at
 * most twice the bare loop, peak memory under 200 MB over the process's
 * baseline; HTML and CSV under 3 s. Prints figures; asserts nothing.
 *
 *   npx tsx bench/reports.ts           (make bench runs it)
 *   BENCH_REPORT_RISKS=10000 BENCH_REPORT_TARGETS=1000
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { envInteger } from './support/env.js';
import { cleanup, runBenchmark, tempDirectory } from './support/processes.js';
import { seedReportData } from './support/report-seed.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const riskCount = envInteger('BENCH_REPORT_RISKS', 10_000, 1);
const targetCount = envInteger('BENCH_REPORT_TARGETS', 1_000, 1);

interface Measurement {
  mode: string;
  seconds: number;
  bytes: number;
  peakRssMb: number;
  baselineRssMb: number;
}

/** The old-space cap of the extra PDF run: enough for the report's live data, so V8 collects instead of growing. */
const HEAP_CAP_MB = 192;

function measure(dataDir: string, mode: string, format?: string, nodeFlags: string[] = []): Measurement {
  const args = [...nodeFlags, '--import', 'tsx', join(ROOT, 'bench/support/report-child.ts'), mode, dataDir, ...(format === undefined ? [] : [format])];
  const child = spawnSync(process.execPath, args, { cwd: ROOT, encoding: 'utf8', maxBuffer: 4 * 1024 * 1024 });
  if (child.status !== 0) throw new Error(`${mode} ${format ?? ''} failed: ${child.stderr}`);
  const result = JSON.parse(child.stdout.trim().split('\n').at(-1)!) as Measurement;
  return nodeFlags.length === 0 ? result : { ...result, mode: `${result.mode} (${nodeFlags.join(' ')})` };
}

function verdict(met: boolean): string {
  return met ? 'met' : 'NOT met';
}

function print(results: Measurement[]): void {
  console.log(`${'mode'.padEnd(40)} seconds   file (MB)   peak RSS (MB)   over baseline (MB)`);
  for (const result of results) {
    const over = result.peakRssMb - result.baselineRssMb;
    console.log(`${result.mode.padEnd(40)} ${result.seconds.toFixed(2).padStart(8)} ${(result.bytes / 1e6).toFixed(1).padStart(11)} ${result.peakRssMb.toFixed(0).padStart(15)} ${over.toFixed(0).padStart(20)}`);
  }
  const bare = results.find((result) => result.mode === 'bare PDF')!;
  const pdf = results.find((result) => result.mode === 'Vigil PDF')!;
  const ratio = pdf.seconds / bare.seconds;
  const over = pdf.peakRssMb - pdf.baselineRssMb;
  console.log(`\nPDF: ${pdf.seconds.toFixed(2)} s (aim < 10 s: ${verdict(pdf.seconds < 10)}), ${ratio.toFixed(2)}x the bare loop (aim <= 2: ${verdict(ratio <= 2)}), ${over.toFixed(0)} MB over baseline (aim < 200: ${verdict(over < 200)})`);
  const capped = results.find((result) => result.mode.startsWith('Vigil PDF ('))!;
  const cappedOver = capped.peakRssMb - capped.baselineRssMb;
  console.log(
    `PDF with ${capped.mode.slice('Vigil PDF '.length)}: ${capped.seconds.toFixed(2)} s, ${(capped.seconds / bare.seconds).toFixed(2)}x the bare loop, ${cappedOver.toFixed(0)} MB over baseline (aim < 200: ${verdict(cappedOver < 200)}): ` +
      'the live data fits; without a cap V8 lets the heap grow several times the live size before collecting pdfkit\'s garbage',
  );
  for (const mode of ['Vigil HTML', 'Vigil CSV']) {
    const result = results.find((entry) => entry.mode === mode)!;
    console.log(`${mode.slice(6)}: ${result.seconds.toFixed(2)} s (aim < 3 s: ${verdict(result.seconds < 3)}), ${(result.peakRssMb - result.baselineRssMb).toFixed(0)} MB over baseline`);
  }
}

async function main(): Promise<void> {
  const dataDir = tempDirectory('vigil-bench-reports-');
  console.log(`node ${process.version}; ${riskCount} risks over ${targetCount} targets; each measurement in its own process`);
  const seedStarted = performance.now();
  seedReportData(dataDir, targetCount, riskCount);
  console.log(`seeded in ${((performance.now() - seedStarted) / 1000).toFixed(1)} s\n`);
  print([
    measure(dataDir, 'bare'),
    measure(dataDir, 'vigil', 'PDF'),
    measure(dataDir, 'vigil', 'PDF', [`--max-old-space-size=${HEAP_CAP_MB}`]),
    measure(dataDir, 'vigil', 'HTML'),
    measure(dataDir, 'vigil', 'CSV'),
  ]);
}

runBenchmark(main, cleanup, 600);
