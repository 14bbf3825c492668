/** Evidence as a reader sees it in every report format: labelled lines, never raw JSON; the CSV's location and evidence columns. */
import { PassThrough } from 'node:stream';
import { parse } from 'csv-parse/sync';
import { expect } from 'chai';
import { evidenceOf, locationOf, EVIDENCE_LIMITS } from '../../src/domain/reports/evidence.js';
import { buildReportModel } from '../../src/domain/reports/report-model.js';
import type { ReportRisk, ReportSnapshot } from '../../src/domain/reports/snapshot.js';
import { CSV_COLUMNS, renderCsvReport } from '../../src/reports/csv-report.js';
import { renderHtmlReport } from '../../src/reports/html-report.js';
import { reportSnapshot } from '../support/report-snapshot.js';

function withInfo(base: ReportRisk, additionalInfo: Record<string, unknown>): ReportRisk {
  return { ...base, definition: { ...base.definition, additional_info: additionalInfo } };
}

const NMAP = {
  port: 443,
  protocol: 'tcp',
  state: 'open',
  service_name: 'https',
  service_product: 'nginx',
  service_version: '1.25.3',
  scripts: [{ id: 'http-title', output: 'Shop' }],
};
const ZAP = {
  plugin_id: '40012',
  confidence: 'Medium',
  references: ['https://owasp.org/xss'],
  instance_count: 2,
  instances: [{ uri: 'https://shop.example.com/search?q=1', method: 'GET', param: 'q', evidence: '<script>alert(1)</script>' }],
  site: 'https://shop.example.com',
};
const NUCLEI = { template_id: 'tls-version', matched_at: 'https://shop.example.com:443', extracted_results: ['tls10', 'tls11'], cves: ['CVE-2024-1'] };

async function rendered(render: (out: PassThrough) => Promise<void>): Promise<string> {
  const out = new PassThrough();
  const chunks: Buffer[] = [];
  out.on('data', (chunk: Buffer) => chunks.push(chunk));
  await render(out);
  return Buffer.concat(chunks).toString('utf8');
}

describe('report evidence', () => {
  const base = reportSnapshot().risks[0]!;

  it('turns nmap evidence into ordered labelled lines', () => {
    expect(evidenceOf(withInfo(base, NMAP))).to.deep.equal([
      { label: 'Port', value: '443' },
      { label: 'Protocol', value: 'tcp' },
      { label: 'State', value: 'open' },
      { label: 'Service', value: 'https' },
      { label: 'Product', value: 'nginx' },
      { label: 'Version', value: '1.25.3' },
      { label: 'Script http-title', value: 'Shop' },
    ]);
  });

  it('turns ZAP instances and nuclei results into readable lines, with no JSON', () => {
    const zap = evidenceOf(withInfo(base, ZAP));
    expect(zap).to.deep.include({ label: 'Instance 1', value: 'GET https://shop.example.com/search?q=1 · param: q · evidence: <script>alert(1)</script>' });
    expect(zap[0]).to.deep.equal({ label: 'Site', value: 'https://shop.example.com' });
    const nuclei = evidenceOf(withInfo(base, NUCLEI));
    expect(nuclei.slice(0, 3)).to.deep.equal([
      { label: 'Matched at', value: 'https://shop.example.com:443' },
      { label: 'Template', value: 'tls-version' },
      { label: 'Extracted results', value: 'tls10, tls11' },
    ]);
    for (const line of [...zap, ...nuclei]) expect(line.value).not.to.match(/[{}"]/);
  });

  it('bounds each value and the number of lines', () => {
    const instances = Array.from({ length: 30 }, (_, index) => ({ uri: `https://e.example/${index}`, evidence: 'x'.repeat(EVIDENCE_LIMITS.maxValueChars) }));
    const evidence = evidenceOf(withInfo(base, { instances }));
    expect(evidence).to.have.length(EVIDENCE_LIMITS.maxEntries);
    expect(evidence[0]!.value).to.have.length(EVIDENCE_LIMITS.maxValueChars + '… (cut)'.length);
    expect(evidence[0]!.value.endsWith('… (cut)')).to.equal(true);
  });

  it('gives a URL for web findings and host:port/protocol for network ones', () => {
    expect(locationOf(withInfo(base, ZAP), 'https://shop.example.com')).to.equal('https://shop.example.com/search?q=1');
    expect(locationOf(withInfo(base, NUCLEI), 'https://shop.example.com')).to.equal('https://shop.example.com:443');
    expect(locationOf(withInfo(base, NMAP), '203.0.113.7')).to.equal('203.0.113.7:443/tcp');
    expect(locationOf(withInfo(base, NMAP), 'https://shop.example.com:8443/app')).to.equal('shop.example.com:443/tcp');
    expect(locationOf(withInfo(base, {}), '203.0.113.7')).to.equal('');
  });

  it('the HTML report lists the evidence as labelled fields, escaped', async () => {
    const snapshot = reportSnapshot();
    const risks = snapshot.risks.map((risk, index) => (index === 0 ? withInfo(risk, ZAP) : risk));
    const page = await rendered((out) => renderHtmlReport(buildReportModel({ ...snapshot, risks }), out));
    expect(page).to.contain('<dt>Instance 1</dt><dd>GET https://shop.example.com/search?q=1 · param: q · evidence: &lt;script&gt;alert(1)&lt;/script&gt;</dd>');
    expect(page).not.to.contain('"uri"');
  });

  it('the CSV has location and evidence columns, formula cells neutralised', async () => {
    const snapshot: ReportSnapshot = reportSnapshot();
    const risks = snapshot.risks.map((risk) => (risk.targetId === 't-db' ? withInfo(risk, { ...NMAP, service_name: '=cmd|calc' }) : withInfo(risk, ZAP)));
    const model = buildReportModel({ ...snapshot, risks });
    const text = await rendered((out) => renderCsvReport(model, out));
    expect(text.split('\r\n')[0]).to.equal(CSV_COLUMNS.join(','));
    const rows = parse(text, { columns: true }) as Array<Record<string, string>>;
    const network = rows.find((row) => row['target'] === '203.0.113.7')!;
    expect(network['location']).to.equal('203.0.113.7:443/tcp');
    expect(network['evidence']).to.equal('Port: 443; Protocol: tcp; State: open; Service: =cmd|calc; Product: nginx; Version: 1.25.3; Script http-title: Shop');
    const web = rows.find((row) => row['target'] === 'https://shop.example.com')!;
    expect(web['location']).to.equal('https://shop.example.com/search?q=1');
    expect(web['evidence']).to.equal(
      'Site: https://shop.example.com; Plugin: 40012; Confidence: Medium; Instances found: 2; Instance 1: GET https://shop.example.com/search?q=1 · param: q · evidence: <script>alert(1)</script>',
    );
    const hostile = [withInfo(risks[0]!, { matched_at: '=HYPERLINK("https://evil.example")' })];
    const hostileRows = parse(await rendered((out) => renderCsvReport(buildReportModel({ ...snapshot, risks: hostile }), out)), { columns: true }) as Array<
      Record<string, string>
    >;
    expect(hostileRows[0]!['location']).to.equal(`'=HYPERLINK("https://evil.example")`);
  });
});
