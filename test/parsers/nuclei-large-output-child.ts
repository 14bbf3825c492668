/**
 * Run by nuclei.test.ts in a child process with a small V8 heap: generates
 * nuclei JSON Lines of the given size as they are written (never whole in
 * memory) and streams them through the parser with the byte cap raised to
 * that size. Prints one JSON line: the findings, or the error and how many
 * bytes had been written when it was thrown. Usage: <MiB> <repeats|distinct>
 */
import { createNucleiParser } from '../../src/parsers/nuclei.js';
import { collectingEvery, peakRssMb } from '../support/peak-rss.js';

const [mebibytes, kind] = process.argv.slice(2) as [string, 'repeats' | 'distinct'];
const total = Number(mebibytes) * 1024 * 1024;
const parser = createNucleiParser({ maxBytes: total });
const encoder = new TextEncoder();

function record(n: number): string {
  // Repeats: five templates on one host, merged into five findings. Distinct: a new path each time, a new finding each time.
  const path = kind === 'repeats' ? `/probe/${n % 5}` : `/probe/${n}`;
  return JSON.stringify({
    'template-id': `template-${n % 5}`,
    info: { name: `Template ${n % 5}`, severity: 'medium', description: kind === 'repeats' ? 'd'.repeat(500) : 'd' },
    type: 'http',
    host: 'https://shop.example',
    'matched-at': `https://shop.example${path}`,
    ...(kind === 'repeats' ? { request: 'GET / HTTP/1.1\r\n'.repeat(20), response: 'r'.repeat(1000) } : {}),
  });
}

let written = 0;

const collectNow = collectingEvery(); // a full collection every 32 MiB written (peak-rss.ts)
try {
  for (let n = 0; ; n++) {
    const bytes = encoder.encode(`${record(n)}\n`);
    if (written + bytes.byteLength > total) break;
    written += bytes.byteLength;
    parser.write(bytes);
    collectNow(written);
  }
  const { findings } = parser.end();
  console.log(JSON.stringify({ findings: findings.length, written, maxRssMb: peakRssMb() }));
} catch (error) {
  console.log(JSON.stringify({ error: error instanceof Error ? error.message : String(error), written }));
}
