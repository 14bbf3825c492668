/**
 * Run by zap.test.ts in a child process with a small V8 heap: generates a ZAP
 * report of the given size as it is written (never whole in memory) and
 * streams it through the parser with the byte cap raised to that size. Prints
 * one JSON line: the findings, or the error and how many bytes had been
 * written when it was thrown. Usage: <MiB> <same-site|distinct-sites>
 */
import { createZapParser } from '../../src/parsers/zap.js';
import { collectingEvery, peakRssMb } from '../support/peak-rss.js';

const [mebibytes, kind] = process.argv.slice(2) as [string, 'same-site' | 'distinct-sites'];
const total = Number(mebibytes) * 1024 * 1024;
const parser = createZapParser('OWASP_ZAP', { maxBytes: total });
const encoder = new TextEncoder();

function alert(n: number): string {
  // Distinct sites: small alerts, so that the findings cap (not the cap on their text) is what a big file passes.
  if (kind === 'distinct-sites') return JSON.stringify({ pluginid: String(10000 + (n % 7)), alert: `Alert ${n % 7}`, riskcode: '1' });
  return JSON.stringify({
    pluginid: String(10000 + (n % 7)),
    alert: `Alert ${n % 7}`,
    riskcode: String(n % 4),
    confidence: '2',
    desc: `<p>${'Description text of the alert. '.repeat(20)}${n}</p>`,
    solution: '<p>Fix it.</p>',
    otherinfo: 'x'.repeat(400),
    count: '3',
    instances: [0, 1, 2].map((i) => ({ uri: `https://shop.example/page/${n}/${i}`, method: 'GET', param: '', evidence: 'e'.repeat(200) })),
  });
}

function site(n: number, alerts: string[]): string {
  const name = kind === 'same-site' ? 'https://shop.example' : `https://site-${n}.example`;
  return `{"@name":${JSON.stringify(name)},"@host":"shop.example","@port":"443","@ssl":"true","alerts":[${alerts.join(',')}]}`;
}

let written = 0;

const collectNow = collectingEvery(); // a full collection every 32 MiB written (peak-rss.ts)
function write(text: string): void {
  const bytes = encoder.encode(text);
  written += bytes.byteLength;
  parser.write(bytes);
  collectNow(written);
}

try {
  write('{"@version":"2.14.0","@generated":"test","site":[');
  const closing = ']}';
  for (let n = 0; ; n++) {
    const piece = (n === 0 ? '' : ',') + site(n, [alert(n), alert(n + 1), alert(n + 2)]);
    if (written + encoder.encode(piece).byteLength + closing.length > total) break;
    write(piece);
  }
  write(closing);
  const { findings } = parser.end();
  console.log(JSON.stringify({ findings: findings.length, written, maxRssMb: peakRssMb() }));
} catch (error) {
  console.log(JSON.stringify({ error: error instanceof Error ? error.message : String(error), written }));
}
