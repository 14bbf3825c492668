/**
 * The PDF of each SUCCEEDED scan (issue 26), end to end in the embedded
 * runtime: real nmap scans of loopback listeners, the PDF listed in the
 * scan's results, downloaded over HTTP and read back with poppler's
 * pdftotext; made again after a crash; cut, with a note, past its cap.
 */
import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ScanPdfs } from '../../src/app/scan-pdfs.js';
import { systemClock } from '../../src/domain/clock.js';
import { FileSystemResultFiles } from '../../src/store/result-files.js';
import { SqliteScanPdfRepository } from '../../src/store/scan-pdfs-repository.js';
import { SqliteScanRepository } from '../../src/store/scans-repository.js';
import { SqliteAccountRepository } from '../../src/store/accounts-repository.js';
import { renderScanPdf } from '../../src/reports/pdf/scan-pdf.js';
import { tcpListener, type TcpListener } from '../support/listeners.js';
import { TestService } from '../support/test-service.js';
import { tempDir } from '../support/temp-dir.js';
import { waitFor } from '../support/wait.js';

const LAB = { VIGIL_ALLOW_TARGETS: '127.0.0.0/8' };

/** A download as bytes; a JSON answer (an error) is checked against the OpenAPI document. */
async function download(service: TestService, resultId: string, key = service.apiKey) {
  const path = `/v1/results/${encodeURIComponent(resultId)}`;
  const response = await fetch(new URL(path, service.baseUrl), { headers: { 'X-SERVICE-API-KEY': key } });
  const bytes = Buffer.from(await response.arrayBuffer());
  const isJson = (response.headers.get('content-type') ?? '').includes('application/json');
  if (isJson) service.validateResponse('GET', path, response.status, JSON.parse(bytes.toString('utf8')));
  return { status: response.status, headers: response.headers, bytes };
}

function pdfText(pdf: Buffer, dir: string, name: string): string {
  mkdirSync(dir, { recursive: true });
  const path = join(dir, `${name}.pdf`);
  writeFileSync(path, pdf);
  return execFileSync('pdftotext', ['-layout', path, '-'], { encoding: 'utf8' });
}

/** The text of the PDF from one section heading to the next ("New open risks (new_open)" up to "Still open risks (still_open)"). */
function section(text: string, from: string, to?: string): string {
  const start = text.lastIndexOf(from);
  expect(start, `the section "${from}"`).to.be.greaterThan(-1);
  const end = to === undefined ? text.length : text.indexOf(to, start);
  return text.slice(start, end === -1 ? text.length : end);
}

const NEW = 'New open risks (new_open)';
const STILL = 'Still open risks (still_open)';
const CLOSED = 'Closed risks (closed)';

describe('the PDF of each SUCCEEDED scan, end to end with real nmap', function () {
  this.timeout(180_000);
  let service: TestService;
  let dir: ReturnType<typeof tempDir>;
  const listeners: TcpListener[] = [];

  beforeEach(async () => {
    dir = tempDir();
    service = await TestService.start({ env: LAB, dataDir: dir.path });
  });
  afterEach(async () => {
    await service.stop();
    for (const listener of listeners.splice(0)) await listener.close();
    dir.remove();
  });

  const scanOf = async (id: string) => (await service.get(`/v1/scans/${id}`)).body.data;
  async function scanToEnd(): Promise<any> {
    const started = await service.post('/v1/scans', { type: 'NMAP', targets: ['127.0.0.1'] });
    expect(started.status, started.text).to.equal(200);
    const done = await waitFor(
      () => scanOf(started.body.data.id),
      (scan) => ['SUCCEEDED', 'FAILED'].includes(scan.state),
      'the scan to finish',
    );
    expect(done.state, JSON.stringify(done.conditions)).to.equal('SUCCEEDED');
    return done;
  }
  const pdfOf = (scan: any) => scan.results.find((result: { content_type: string }) => result.content_type === 'application/pdf');

  it("lists a PDF after the scanner's file; the download shows the target and each risk in its list (new_open, then still_open and closed); another account gets 404", async () => {
    const kept = await tcpListener();
    const dropped = await tcpListener();
    listeners.push(kept, dropped);
    const first = await scanToEnd();
    expect(first.results.map((result: { content_type: string }) => result.content_type)).to.deep.equal(['application/xml', 'application/pdf']);
    const firstPdf = await download(service, pdfOf(first).result_id);
    expect(firstPdf.status).to.equal(200);
    expect(firstPdf.headers.get('content-type')).to.equal('application/pdf');
    expect(firstPdf.headers.get('content-disposition')).to.equal('attachment; filename="scan-report.pdf"');
    expect(Number(firstPdf.headers.get('content-length'))).to.equal(firstPdf.bytes.length);
    expect(firstPdf.bytes.subarray(0, 5).toString('latin1')).to.equal('%PDF-');
    const firstText = pdfText(firstPdf.bytes, dir.path, 'first');
    expect(firstText).to.include('NMAP scan of 127.0.0.1');
    expect(firstText).to.include(first.id);
    const firstNew = section(firstText, NEW, STILL);
    expect(firstNew).to.include(`Open port ${kept.port}/tcp`).and.to.include(`Open port ${dropped.port}/tcp`);
    expect(section(firstText, STILL, CLOSED)).to.include('This scan found no risk that an earlier scan had found.');
    expect(section(firstText, CLOSED)).to.include('This scan closed no risk.');
    expect(firstText).not.to.include('This PDF was cut');

    await dropped.close();
    listeners.splice(listeners.indexOf(dropped), 1);
    const second = await scanToEnd();
    const secondText = pdfText((await download(service, pdfOf(second).result_id)).bytes, dir.path, 'second');
    expect(section(secondText, NEW, STILL)).to.include('This scan found no risk that was new on its targets.');
    const still = section(secondText, STILL, CLOSED);
    expect(still).to.include(`Open port ${kept.port}/tcp`).and.not.to.include(`Open port ${dropped.port}/tcp`);
    expect(section(secondText, CLOSED)).to.include(`Open port ${dropped.port}/tcp`);

    const other = service.createAccount('someone-else');
    expect((await download(service, pdfOf(second).result_id, other.apiKey)).status).to.equal(404);
    const theirs = await service.get(`/v1/results/${pdfOf(second).result_id}`, { key: other.apiKey });
    expect(theirs.status).to.equal(404);
  });

  it('a FAILED scan lists no PDF and leaves none to be made', async () => {
    const started = await service.post('/v1/scans', { type: 'NMAP', targets: ['nothing-here.invalid'] });
    const failed = await waitFor(
      () => scanOf(started.body.data.id),
      (scan) => ['SUCCEEDED', 'FAILED'].includes(scan.state),
      'the scan to fail',
    );
    expect(failed.state).to.equal('FAILED');
    expect(failed.results).to.deep.equal([]);
    expect(service.vigil.db.prepare('SELECT COUNT(*) AS n FROM pending_result_files').get()).to.deep.equal({ n: 0 });
  });

  it('a PDF a crash left unmade (marked, a half-written temporary file) is made at the next start; a download while it is marked makes it first', async () => {
    listeners.push(await tcpListener());
    const done = await scanToEnd();
    const pdf = pdfOf(done);
    await service.vigil.scanPdfs.idle();
    const folder = join(dir.path, 'results', done.id);
    // A download while marked: made first (again), then sent.
    service.vigil.db
      .prepare("INSERT INTO pending_result_files (result_id, scan_id, account_id, created_at) VALUES (?, ?, ?, '2026-01-01T00:00:00Z')")
      .run(pdf.result_id, done.id, service.accountId);
    rmSync(join(folder, 'scan-report.pdf'));
    const whileMarked = await download(service, pdf.result_id);
    expect(whileMarked.status).to.equal(200);
    expect(pdfText(whileMarked.bytes, dir.path, 'while-marked')).to.include(NEW);
    expect(service.vigil.scanPdfs.isPending(pdf.result_id)).to.equal(false);

    // A crash mid-rendering: the mark stays, the file is not there, a temporary file is.
    service.vigil.db
      .prepare("INSERT INTO pending_result_files (result_id, scan_id, account_id, created_at) VALUES (?, ?, ?, '2026-01-01T00:00:00Z')")
      .run(pdf.result_id, done.id, service.accountId);
    rmSync(join(folder, 'scan-report.pdf'));
    writeFileSync(join(folder, 'scan-report.pdf.0123456789ab.partial'), '%PDF-1.3 half');
    const key = service.apiKey;
    await service.stop();
    service = await TestService.start({ env: LAB, dataDir: dir.path, accountName: 'after-restart' });
    await waitFor(
      async () => service.vigil.scanPdfs.isPending(pdf.result_id),
      (pending) => !pending,
      'the PDF to be made at start-up',
    );
    expect(existsSync(join(folder, 'scan-report.pdf.0123456789ab.partial'))).to.equal(false);
    const after = await download(service, pdf.result_id, key);
    expect(after.status).to.equal(200);
    expect(pdfText(after.bytes, dir.path, 'after-restart')).to.include(`Open port ${listeners[0]!.port}/tcp`);
  });

  it('holds at most its cap of risks and says, on its cover and in the list it cut, that it was cut and where the rest are', async () => {
    listeners.push(await tcpListener(), await tcpListener());
    const done = await scanToEnd();
    await service.vigil.scanPdfs.idle();
    expect(done.risks.new_open).to.have.length(2);
    // The service's own parts with a cap of 1, writing to a folder of its own.
    const capped = new ScanPdfs({
      repository: new SqliteScanPdfRepository(service.vigil.db),
      scans: new SqliteScanRepository(service.vigil.db),
      accounts: new SqliteAccountRepository(service.vigil.db),
      resultFiles: new FileSystemResultFiles(join(dir.path, 'capped')),
      render: renderScanPdf,
      clock: systemClock,
      maxRisks: 1,
    });
    service.vigil.db
      .prepare("INSERT INTO pending_result_files (result_id, scan_id, account_id, created_at) VALUES (?, ?, ?, '2026-01-01T00:00:00Z')")
      .run(pdfOf(done).result_id, done.id, service.accountId);
    await capped.ensureRendered({ resultId: pdfOf(done).result_id, scanId: done.id, accountId: service.accountId });
    const text = pdfText(readFileSync(join(dir.path, 'capped', done.id, 'scan-report.pdf')), dir.path, 'capped');
    const flat = text.replace(/\s+/g, ' ');
    expect(flat).to.include("This PDF was cut: it holds 1 of the scan's 2 risks");
    expect(flat).to.include(`GET /v1/scans/${done.id}`);
    expect(flat).to.include('POST /v1/reports');
    expect(flat).to.include('2 risks are in this list; this PDF holds the 1 most severe');
    const shown = listeners.filter((listener) => section(text, NEW, STILL).includes(`Open port ${listener.port}/tcp`));
    expect(shown).to.have.length(1);
  });
});
