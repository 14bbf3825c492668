/**
 * Benchmark: parse and ingest throughput and peak memory for a 25 MB nmap
 * XML (real <host> blocks from the fixtures, repeated with distinct public
 * addresses) and a 25 MB ZAP JSON (real sites, repeated under distinct
 * names), side by side with a bare saxes / JSON.parse pass over the same
 * bytes, the practical limit. Each measurement runs in its own child process
 * so that peak memory is its own. `ingest` is the upload path a user meets
 * (ImportsService: parse as the bytes arrive, store the file, create the
 * targets, record the risks and write every event), not a shortcut into the
 * risk history; opening the store and creating the account happen before
 * the clock starts, as they do before an upload reaches a running service. Aims (issue 17): nmap ingest <= 3x the bare pass and >= 15
 * MB/s, peak <= 4x the file; ZAP <= 2x bare JSON.parse, peak <= 2x the file.
 * ZAP has two bare passes: `bare` (JSON.parse of the whole text, the fastest
 * a JSON file can be read in Node, and the most memory: 4.3-4.9x the file)
 * and `bare-stream` (@streamparser/json alone, the library Vigil's ZAP
 * parser streams with, emitting each alert and dropping it: no Vigil code).
 * Both ratios are printed; the aim is the one against JSON.parse, as the
 * issue set it: it is the practical limit a user compares with, and an aim
 * against the library Vigil chose would be met by choosing a slow library.
 * The ratio against the library says what Vigil's own code costs.
 * Wall and CPU time are both printed: on a shared 2-core machine the wall
 * time of the same run varies by 2x, the CPU time by about 10%. Prints
 * figures; asserts nothing.
 *
 * Where the time went (node --cpu-prof on the ingest child, 25 MB nmap,
 * 45,158 findings on 620 targets, 2-core machine under other load):
 *   before: ~4.7 CPU s. Parse ~0.95 s (saxes ~0.7 s of it, the nmap handlers'
 *     path joins and finding building the rest); per-risk INSERT 0.6 s,
 *     per-risk detection INSERT 0.25-0.3 s, per-event INSERT into the outbox
 *     0.5 s, risk.created event building 0.4 s, transaction commits (WAL
 *     writes, checkpoints) 1.2-1.4 s, GC 0.6 s. The upload writes 40 MB of
 *     risk definitions and 56 MB of event payloads: a 176 MB database and an
 *     84 MB WAL for a 25 MB file.
 *   after (multi-row INSERTs of 200 risks / 200 events, one read of a
 *     target's risks, its detections in one call to the store; a single
 *     INSERT ... SELECT FROM json_each for the detections was tried and was
 *     slower, ~0.42 s against ~0.25-0.3 s): ~4.1-4.4 CPU s. Commits (WAL
 *     writes and checkpoints) ~1.2 s, risk INSERTs ~0.5 s, event INSERTs
 *     ~0.4 s, detections ~0.25 s, GC ~0.5 s, parse ~0.9 s. The
 *     statement-call overhead is gone; what is left is SQLite's own work on
 *     ~100 MB of JSON text, which no batching removes. The 3x-bare aim
 *     (~0.9 s) would need the upload to write far less (events that do not
 *     carry the whole risk); it is not met.
 *
 * ZAP (node --cpu-prof on the parse child, 25 MB, 211 findings after
 * merging; the parse mode reads the file as a stream, as an upload arrives):
 *   before: JSON.parse of the whole text, then zod over the document, then
 *     the findings. Peak 4.8-6.2x the file (the joined text, the parsed
 *     value and, on the upload path, the bytes kept and joined again to be
 *     stored). One run on this branch before the change: parse 1.26x bare
 *     JSON.parse in CPU time, peak 4.76x the file, upload peak 5.78x; the
 *     README's run: upload 2.5x in CPU time, peak 6.2x. Memory grew with the file: a 256 MiB report peaked
 *     at 1.1 GB RSS and did not fit a 64 MiB V8 heap.
 *   after: @streamparser/json's tokenizer and token parser; each alert is
 *     checked and becomes a finding when it completes and is dropped; the
 *     upload keeps the bytes it must store as the pieces that arrived and
 *     writes them one after another (no joined copy). Parse CPU is ~0.4 s:
 *     the library's tokenizer ~0.1 s and its token objects' garbage (GC is
 *     the largest single item, ~0.1-0.2 s), HTML-to-text of descriptions
 *     ~0.05 s (as before), the per-value callback ~0.05 s, byte checks
 *     (nesting, string length, UTF-8) ~0.02 s, zod and the findings the
 *     rest. Three runs (JSON.parse itself took 0.10-0.17 CPU s on the
 *     shared machine, the library 0.23-0.26): parse 2.1-4.0x bare
 *     JSON.parse in CPU time (1.7-8.0x in wall time), 1.6x the bare library
 *     in CPU time; peak 1.7-2.4x the file (GC headroom, not the file: the
 *     256 MiB report peaks at 140-160 MB RSS, tsx included, and fits a 64
 *     MiB heap). Upload (ingest) 2.2-4.3x bare JSON.parse in CPU time
 *     (2.0-6.9x wall), 1.7-1.8x the bare library; peak 2.35-2.59x the file,
 *     of which 1x is the file's bytes kept to be stored. The aim (<= 2x
 *     JSON.parse) is not met: the library alone costs 1.4-2.6x JSON.parse's
 *     CPU, before any of Vigil's checks and findings.
 *
 * nuclei (parse only, 24.9 MB of JSON Lines from a real run repeated for
 * distinct hosts, 24,897 findings; no aim in issue 17; bare = JSON.parse of
 * each line of the whole text): before (the whole text decoded, then one
 * JSON.parse a line) 0.72 CPU s, peak 4.56x the file (one run); after (each
 * line parsed when its newline arrives, then dropped) 0.68-0.88 CPU s, peak
 * 1.61-3.38x the file over three runs. What is left is the findings
 * themselves (25k of them, the parser's output) and GC headroom: 256 MiB of
 * lines that merge into 5 findings peak at 123 MB RSS (852 MB before).
 *
 *   npx tsx bench/ingest.ts            (make bench runs it)
 *   BENCH_INGEST_MB=25                 size of each generated file
 *   BENCH_INGEST_FORMATS=zap           only these formats (nmap,zap,nuclei; default all)
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const MEGABYTE = 1024 * 1024;
/** Just under the size: the parsers refuse files over 25 MiB, the upload limit. */
const targetBytes = Number(process.env.BENCH_INGEST_MB ?? '25') * MEGABYTE - 64 * 1024;

/** A public-looking address for host n, outside every special-purpose range. */
function addressOf(n: number): string {
  return `45.${(n >> 16) & 255}.${(n >> 8) & 255}.${n & 255}`;
}

function buildNmap(): string {
  const source = readFileSync(join(ROOT, 'test/fixtures/nmap/defectdojo-nmap-issue4406.xml'), 'utf8');
  const host = source.slice(source.indexOf('<host '), source.indexOf('</host>') + '</host>'.length);
  const head = '<?xml version="1.0" encoding="UTF-8"?>\n<nmaprun scanner="nmap" args="nmap -sV" version="7.91">\n';
  const parts = [head];
  let size = head.length;
  for (let n = 1; ; n++) {
    const block = host.replace(/addr="10\.250\.195\.71"/g, `addr="${addressOf(n)}"`).replace(/ip-10-250-195-71[^"]*/g, `host-${n}.bench.example.com`);
    if (size + block.length + 1 > targetBytes) break;
    parts.push(block, '\n');
    size += block.length + 1;
  }
  parts.push('</nmaprun>\n');
  return parts.join('');
}

function buildZap(): string {
  const source = JSON.parse(readFileSync(join(ROOT, 'test/fixtures/zap/securecodebox-zap-demo-juice-shop-full-scan-zap-results.json'), 'utf8')) as { site: Array<Record<string, unknown>> };
  const sites: unknown[] = [];
  let size = 0;
  for (let n = 0; ; n++) {
    for (const site of source.site) {
      const copy = { ...site, '@name': `https://site-${n}.bench.example.com`, '@host': `site-${n}.bench.example.com` };
      const length = JSON.stringify(copy).length + 1;
      if (size + length > targetBytes) return JSON.stringify({ '@version': '2.11.0', '@generated': 'bench', site: sites });
      sites.push(copy);
      size += length;
    }
  }
}

/** nuclei JSON Lines: the records of a real run, repeated for distinct hosts (parse only: nuclei output is not an upload type). */
function buildNuclei(): string {
  const lines = readFileSync(join(ROOT, 'test/fixtures/nuclei/securecodebox-nuclei-example-com-test.jsonl'), 'utf8').split('\n').filter((line) => line.trim() !== '');
  const parts: string[] = [];
  let size = 0;
  for (let n = 0; ; n++) {
    for (const line of lines) {
      const copy = `${line.replace(/example\.com/g, `site-${n}.bench.example.com`)}\n`;
      if (size + copy.length > targetBytes) return parts.join('');
      parts.push(copy);
      size += copy.length;
    }
  }
}

interface Measurement {
  mode: string;
  seconds: number;
  /** CPU time (user + system) of the measurement: less disturbed than wall time by other work on a shared machine. */
  cpuSeconds: number;
  findings: number;
  peakRssMb: number;
  baselineRssMb: number;
}

function measure(format: string, mode: string, file: string): Measurement {
  const child = spawnSync(process.execPath, ['--import', 'tsx', join(ROOT, 'bench/support/ingest-child.ts'), format, mode, file], { cwd: ROOT, encoding: 'utf8', maxBuffer: 16 * MEGABYTE });
  if (child.status !== 0) throw new Error(`${format} ${mode} failed: ${child.stderr}`);
  return JSON.parse(child.stdout.trim().split('\n').at(-1)!) as Measurement;
}

function report(format: string, bytes: number, results: Measurement[]): void {
  const mb = bytes / MEGABYTE;
  const bare = results.find((result) => result.mode === 'bare')!;
  console.log(`\n${format}: ${mb.toFixed(1)} MB`);
  console.log('mode        seconds   CPU s    MB/s   findings   findings/s   peak RSS over baseline (MB)   x file size');
  for (const result of results) {
    const over = result.peakRssMb - result.baselineRssMb;
    console.log(
      `${result.mode.padEnd(10)} ${result.seconds.toFixed(2).padStart(8)} ${result.cpuSeconds.toFixed(2).padStart(7)} ${(mb / result.seconds).toFixed(1).padStart(7)} ${String(result.findings).padStart(10)} ${(result.findings / result.seconds).toFixed(0).padStart(12)} ${over.toFixed(0).padStart(29)} ${(over / mb).toFixed(2).padStart(13)}`,
    );
  }
  for (const result of results.filter((r) => !r.mode.startsWith('bare'))) {
    const ratio = result.seconds / bare.seconds;
    const cpuRatio = result.cpuSeconds / bare.cpuSeconds;
    const memory = (result.peakRssMb - result.baselineRssMb) / mb;
    const memoryAim = format === 'nmap' ? 4 : 2;
    const rate = mb / result.seconds;
    if (format === 'nuclei') {
      // Issue 17 sets no aim for nuclei; the figures say what streaming costs and saves against JSON.parse of each line.
      console.log(`${result.mode}: ${ratio.toFixed(2)}x the bare pass in wall time, ${cpuRatio.toFixed(2)}x in CPU time, ${rate.toFixed(1)} MB/s, peak memory ${memory.toFixed(2)}x the file (no aim set)`);
      continue;
    }
    console.log(
      `${result.mode}: ${ratio.toFixed(2)}x the bare pass in wall time (aim <= ${format === 'nmap' ? 3 : 2}: ${ratio <= (format === 'nmap' ? 3 : 2) ? 'met' : 'NOT met'}), ${cpuRatio.toFixed(2)}x in CPU time, ` +
        `${rate.toFixed(1)} MB/s${format === 'nmap' && result.mode === 'ingest' ? ` (aim >= 15: ${rate >= 15 ? 'met' : 'NOT met'})` : ''}, ` +
        `peak memory ${memory.toFixed(2)}x the file (aim <= ${memoryAim}: ${memory <= memoryAim ? 'met' : 'NOT met'})`,
    );
  }
}

const dir = mkdtempSync(join(tmpdir(), 'vigil-bench-ingest-'));
try {
  console.log(`node ${process.version}; each measurement in its own process`);
  const formats = (process.env.BENCH_INGEST_FORMATS ?? 'nmap,zap,nuclei').split(',');
  for (const [format, build] of [['nmap', buildNmap], ['zap', buildZap], ['nuclei', buildNuclei]] as const) {
    if (!formats.includes(format)) continue;
    const file = join(dir, `${format}.${format === 'nmap' ? 'xml' : format === 'zap' ? 'json' : 'jsonl'}`);
    const text = build();
    writeFileSync(file, text);
    const modes = format === 'nuclei' ? ['bare', 'parse'] : ['bare', 'parse', 'ingest'];
    report(format, Buffer.byteLength(text), modes.map((mode) => measure(format, mode, file)));
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
