/**
 * Run by zap.test.ts with --expose-gc: streams a ZAP report whose alerts each
 * carry one 2 MiB evidence string (on distinct sites, so each alert is a
 * finding the parser holds until the end), and measures the V8 heap after a
 * full collection, before the report's last bytes arrive (while the parser
 * holds its findings) and after the end. Prints one JSON line, in MiB.
 */
import { createZapParser } from '../../src/parsers/zap.js';

const ALERTS = 12;
const EVIDENCE_BYTES = 2 * 1024 * 1024;
const encoder = new TextEncoder();
const parser = createZapParser('OWASP_ZAP', { maxBytes: 64 * 1024 * 1024 });
const heapMb = (): number => {
  const gc = (globalThis as { gc?: () => void }).gc!;
  gc();
  gc();
  return process.memoryUsage().heapUsed / 1024 / 1024;
};

const before = heapMb();
parser.write(encoder.encode('{"@version":"2.14.0","site":['));
for (let n = 0; n < ALERTS; n++) {
  const alert = {
    pluginid: '10027',
    alert: 'Information Disclosure',
    riskcode: '1',
    instances: [{ uri: `https://site-${n}.example/`, evidence: `${n}`.padEnd(EVIDENCE_BYTES, 'e') }],
  };
  // Written in 64 KiB pieces, as an upload arrives; the text and its bytes are dropped after each site.
  const bytes = encoder.encode(`${n === 0 ? '' : ','}{"@name":"https://site-${n}.example","alerts":[${JSON.stringify(alert)}]}`);
  for (let offset = 0; offset < bytes.length; offset += 65536) parser.write(bytes.subarray(offset, offset + 65536));
}
const holding = heapMb();
parser.write(encoder.encode(']}'));
const { findings } = parser.end();
const evidence = findings.map((finding) => (finding.definition.additional_info['instances'] as Array<{ evidence: string }>)[0]!.evidence.length);
console.log(JSON.stringify({ findings: findings.length, evidenceChars: evidence, holdingMb: holding - before, afterMb: heapMb() - before }));
