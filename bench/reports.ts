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
 *
 * Wall seconds vary with the load of the shared machine (bare and Vigil run
 * one after the other); the CPU seconds beside them are steadier.
 *
 * Where the PDF's memory went (Node 20, 2-CPU VM shared with other work):
 *
 * Before: 330-354 MB over baseline, 7.1-7.7 s, 1.6-2.0x the bare loop. The
 * live data was small: after each full collection the heap was back at about
 * 90 MB (20 MB over its baseline), yet between two full collections it grew
 * to 350-380 MB. A sampling heap profile that keeps the objects full
 * collections free (HeapProfiler.startSampling with
 * includeObjectsCollectedByMajorGC) put 605 MB in the old generation over one
 * report, 375 MB of it in pdfkit's page content: pdfkit turns every operator
 * it adds to a page (five or six per line of text) into its own small typed
 * array and keeps them until the page ends. V8's allocation-site pretenuring
 * then allocated those arrays straight in the old generation, where they lay
 * dead until the next full collection: the same run with
 * --no-allocation-site-pretenuring peaked 112 MB over baseline.
 *
 * After (src/reports/pdf/pdf-report.ts, PageContent): each page's operators
 * are copied into one reused buffer and handed to the page as one chunk when
 * it ends; the PDF is byte for byte the same (test/unit/pdf-report.test.ts
 * compares it with plain pdfkit). The snapshot's JSON (13 MB) is streamed
 * through gzip into its file instead of held whole with its Buffer, and the
 * scope's risks are parsed row by row. For time: lines are drawn through
 * pdfkit's _fragment rather than doc.text, which measured each line again
 * only to move a cursor, and the standard fonts' widths and kerning pairs
 * are looked up in Maps (font-metrics.ts); each was a fifth of the CPU time.
 * Three runs: 99-108 MB over baseline (bare loop: 84-86 MB), 4.3-7.7 s,
 * 0.55-1.61x the bare loop in wall time and 0.97-1.26x in CPU time
 * (4.4-5.1 CPU s against 4.0-4.5); HTML and CSV 0.5-0.6 s, 52-63 MB over.
 * What remains, from marks at each step of one run (100 MB over baseline
 * at the end): reading the scope raises RSS by 49 MB, 18 MB of it V8's heap
 * (the 10,000 risks, parsed and held for the report) and most of the rest
 * SQLite's page cache (better-sqlite3's default cache_size -16000: up to
 * 16 MB, which the 21 MB database fills) and the sort of the severity
 * order; saving the snapshot adds 10 MB; rendering adds 40 MB, V8's heap growing by 37 MB with the layout's
 * and pdfkit's short-lived objects that still reach the old generation
 * before a full collection frees them (the heap in use after a collection
 * stays about 30 MB over its baseline).
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
  cpuSeconds: number;
  bytes: number;
  peakRssMb: number;
  baselineRssMb: number;
}

function measure(dataDir: string, mode: string, format?: string): Measurement {
  const args = ['--import', 'tsx', join(ROOT, 'bench/support/report-child.ts'), mode, dataDir, ...(format === undefined ? [] : [format])];
  const child = spawnSync(process.execPath, args, { cwd: ROOT, encoding: 'utf8', maxBuffer: 4 * 1024 * 1024 });
  if (child.status !== 0) throw new Error(`${mode} ${format ?? ''} failed: ${child.stderr}`);
  return JSON.parse(child.stdout.trim().split('\n').at(-1)!) as Measurement;
}

function verdict(met: boolean): string {
  return met ? 'met' : 'NOT met';
}

function print(results: Measurement[]): void {
  console.log(`${'mode'.padEnd(12)} seconds   CPU seconds   file (MB)   peak RSS (MB)   over baseline (MB)`);
  for (const result of results) {
    const over = result.peakRssMb - result.baselineRssMb;
    console.log(
      `${result.mode.padEnd(12)} ${result.seconds.toFixed(2).padStart(7)} ${result.cpuSeconds.toFixed(2).padStart(13)} ${(result.bytes / 1e6).toFixed(1).padStart(11)} ${result.peakRssMb.toFixed(0).padStart(15)} ${over.toFixed(0).padStart(20)}`,
    );
  }
  const bare = results.find((result) => result.mode === 'bare PDF')!;
  const pdf = results.find((result) => result.mode === 'Vigil PDF')!;
  const ratio = pdf.seconds / bare.seconds;
  const over = pdf.peakRssMb - pdf.baselineRssMb;
  console.log(
    `\nPDF: ${pdf.seconds.toFixed(2)} s (aim < 10 s: ${verdict(pdf.seconds < 10)}), ${ratio.toFixed(2)}x the bare loop (aim <= 2: ${verdict(ratio <= 2)}; in CPU time ${(pdf.cpuSeconds / bare.cpuSeconds).toFixed(2)}x), ` +
      `${over.toFixed(0)} MB over baseline (aim < 200: ${verdict(over < 200)}; bare loop ${(bare.peakRssMb - bare.baselineRssMb).toFixed(0)} MB)`,
  );
  for (const mode of ['Vigil HTML', 'Vigil CSV']) {
    const result = results.find((entry) => entry.mode === mode)!;
    console.log(
      `${mode.slice(6)}: ${result.seconds.toFixed(2)} s (aim < 3 s: ${verdict(result.seconds < 3)}), ${(result.peakRssMb - result.baselineRssMb).toFixed(0)} MB over baseline`,
    );
  }
}

async function main(): Promise<void> {
  const dataDir = tempDirectory('vigil-bench-reports-');
  console.log(`node ${process.version}; ${riskCount} risks over ${targetCount} targets; each measurement in its own process`);
  const seedStarted = performance.now();
  seedReportData(dataDir, targetCount, riskCount);
  console.log(`seeded in ${((performance.now() - seedStarted) / 1000).toFixed(1)} s\n`);
  print([measure(dataDir, 'bare'), measure(dataDir, 'vigil', 'PDF'), measure(dataDir, 'vigil', 'HTML'), measure(dataDir, 'vigil', 'CSV')]);
}

runBenchmark(main, cleanup, 600);
