/**
 * Issue 16, item 9: `kill -9` of a real `vigil serve` while a scan runs, an
 * upload is being recorded and webhooks are being delivered; then a restart
 * on the same data directory. Nothing may be lost (every event reaches the
 * receiver, every recorded result file exists), doubled (each risk once,
 * each event delivered once or, when the crash cut its attempt short or came
 * before its outcome was written, twice; the attempt log complete)
 * or left behind (no pending import, no unreferenced or temporary file, no
 * scan left RUNNING), and the database passes PRAGMA integrity_check.
 */
import { expect } from 'chai';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import BetterSqlite3 from 'better-sqlite3';
import { makeCertificates, startReceiver, type Receiver } from '../support/https-receiver.js';
import { tempDir } from '../support/temp-dir.js';
import { waitFor } from '../support/wait.js';
import { nmapReport } from '../support/nmap-report.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const CLI = ['--import', 'tsx', 'src/cli/main.ts'];
const KEY = 'crash-restart-test-key';
const HOSTS = 40;
const PORTS = 250;

interface Served {
  child: ChildProcess;
  base: string;
}

async function serve(env: Record<string, string>): Promise<Served> {
  const child = spawn(process.execPath, [...CLI, 'serve'], { cwd: ROOT, env: { ...process.env, VIGIL_PORT: '0', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  // Only the tail is kept: at info level every request is logged.
  const keep = (chunk: Buffer) => (output = (output + chunk.toString('utf8')).slice(-20_000));
  child.stderr!.on('data', keep);
  const port = await new Promise<number>((resolve, reject) => {
    child.stdout!.on('data', (chunk: Buffer) => {
      keep(chunk);
      const match = /"port":(\d+).*"msg":"vigil listening"/.exec(output);
      if (match) resolve(Number(match[1]));
    });
    child.once('exit', (code) => reject(new Error(`serve exited with ${code}: ${output.slice(-2000)}`)));
  });
  return { child, base: `http://127.0.0.1:${port}` };
}

async function api(served: Served, method: string, path: string, body?: unknown): Promise<any> {
  const response = await fetch(`${served.base}${path}`, {
    method,
    headers: { 'X-SERVICE-API-KEY': KEY, ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: response.status, body: await response.json() };
}

function uploadForm(sourceId: string, content: string): FormData {
  const form = new FormData();
  form.set('source_id', sourceId);
  form.set('scan_type', 'NMAP');
  form.set('file', new Blob([content]), 'scan.xml');
  return form;
}

function withDatabase<T>(dataDir: string, read: (db: BetterSqlite3.Database) => T): T {
  const db = new BetterSqlite3(join(dataDir, 'vigil.db'), { readonly: true, fileMustExist: true });
  try {
    return read(db);
  } finally {
    db.close();
  }
}

function count(db: BetterSqlite3.Database, sql: string, ...params: unknown[]): number {
  return (db.prepare(sql).get(...params) as { n: number }).n;
}

describe('reliability: kill -9 during a scan, an upload and webhook delivery, then a restart', function () {
  this.timeout(120_000);
  let dir: ReturnType<typeof tempDir>;
  let receiver: Receiver;
  const children: ChildProcess[] = [];

  before(async () => {
    dir = tempDir();
    const pems = makeCertificates(dir.path);
    receiver = await startReceiver(pems.serverKey, pems.serverCert, (_request, response) => response.writeHead(200).end());
    spawnSync('sh', ['-c', `printf '%s' "$1" > "$2"`, 'sh', pems.caCert, join(dir.path, 'ca.crt')]);
  });
  after(async () => {
    for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await receiver.close();
    dir.remove();
  });

  it('loses, doubles and leaves behind nothing, and the database stays intact', async () => {
    const dataDir = join(dir.path, 'data');
    const env = {
      VIGIL_DATA_DIR: dataDir,
      VIGIL_BOOTSTRAP_API_KEY: KEY,
      VIGIL_ALLOW_TARGETS: '127.0.0.0/8',
      VIGIL_WEBHOOK_CA_FILE: join(dir.path, 'ca.crt'),
      LOG_LEVEL: 'info',
    };
    const file = nmapReport(HOSTS, PORTS, 50);

    let served = await serve(env);
    children.push(served.child);
    const accountId = withDatabase(dataDir, (db) => (db.prepare("SELECT id FROM accounts WHERE name = 'default'").get() as { id: string }).id);
    const added = spawnSync(process.execPath, [...CLI, 'webhooks', 'add', '--account', accountId, '--url', receiver.url], {
      cwd: ROOT,
      env: { ...process.env, ...env },
      encoding: 'utf8',
    });
    expect(added.status, added.stderr).to.equal(0);
    const source = (await api(served, 'POST', '/v1/sources', { source_type: 'IMPORTED', name: 'crash' })).body.data.id as string;
    const scan = (await api(served, 'POST', '/v1/scans', { type: 'NMAP', targets: ['127.0.0.1'] })).body.data.id as string;
    await waitFor(
      async () => (await api(served, 'GET', `/v1/scans/${scan}`)).body.data.state,
      (state) => state !== 'QUEUED',
      'the scan to start',
    );
    const upload = fetch(`${served.base}/v1/results`, { method: 'POST', headers: { 'X-SERVICE-API-KEY': KEY }, body: uploadForm(source, file) }).catch(
      () => undefined,
    );
    // Killed while the upload is being parsed or recorded: the marker row says which.
    await waitFor(
      async () => withDatabase(dataDir, (db) => count(db, 'SELECT COUNT(*) AS n FROM pending_recordings')),
      (n) => n > 0,
      'the upload to begin recording',
      30_000,
    ).catch(() => undefined);
    served.child.kill('SIGKILL');
    await once(served.child, 'exit');
    await upload;

    served = await serve(env);
    children.push(served.child);
    const scanAfter = await waitFor(
      async () => (await api(served, 'GET', `/v1/scans/${scan}`)).body.data,
      (data) => !['QUEUED', 'RUNNING', 'STOPPING'].includes(data.state),
      'the scan to end after the restart',
    );
    expect(['FAILED', 'SUCCEEDED']).to.include(scanAfter.state);
    const again = await fetch(`${served.base}/v1/results`, { method: 'POST', headers: { 'X-SERVICE-API-KEY': KEY }, body: uploadForm(source, file) });
    expect(again.status).to.equal(200);
    const risks = ((await again.json()) as any).data.risks;
    expect(risks.new_open + risks.still_open).to.equal(HOSTS * PORTS);

    const undelivered =
      "SELECT COUNT(*) AS n FROM events e WHERE NOT EXISTS (SELECT 1 FROM webhook_delivery_states d WHERE d.event_id = e.id AND d.state = 'DELIVERED')";
    await waitFor(
      async () => withDatabase(dataDir, (db) => count(db, undelivered)),
      (n) => n === 0,
      'every event delivered',
      90_000,
    );
    const received = new Map<string, number>();
    for (const request of receiver.requests) {
      const id = (JSON.parse(request.body) as { id: string }).id;
      received.set(id, (received.get(id) ?? 0) + 1);
    }

    await waitFor(
      async () => {
        served.child.kill('SIGTERM');
        return once(served.child, 'exit');
      },
      () => true,
      'the service to stop',
    );
    withDatabase(dataDir, (db) => {
      expect(db.pragma('integrity_check', { simple: true })).to.equal('ok');
      expect(count(db, 'SELECT COUNT(*) AS n FROM pending_recordings')).to.equal(0);
      expect(count(db, "SELECT COUNT(*) AS n FROM risks r JOIN targets t ON t.id = r.target_id WHERE t.target LIKE '50.%'")).to.equal(HOSTS * PORTS);
      expect(count(db, "SELECT COUNT(*) AS n FROM scans WHERE state IN ('RUNNING', 'STOPPING')")).to.equal(0);
      const events = db
        .prepare('SELECT e.id, e.type, e.seq, (SELECT COUNT(*) FROM webhook_delivery_states d WHERE d.event_id = e.id) AS deliveries FROM events e')
        .all() as Array<{ id: string }>;
      const lost = events.filter((event) => !received.has(event.id));
      expect(lost.length, `events never delivered, of ${events.length}: ${JSON.stringify(lost.slice(0, 3))}`).to.equal(0);
      expect(
        [...received.values()].every((times) => times <= 2),
        'an event delivered more than twice',
      ).to.equal(true);
      // The attempt log is complete: each delivery's count of attempts is its logged attempts, and a delivered one logged its 2xx.
      expect(
        count(
          db,
          'SELECT COUNT(*) AS n FROM webhook_delivery_states d WHERE d.attempts != (SELECT COUNT(*) FROM webhook_attempts a WHERE a.event_id = d.event_id AND a.endpoint_id = d.endpoint_id)',
        ),
      ).to.equal(0);
      expect(
        count(
          db,
          "SELECT COUNT(*) AS n FROM webhook_delivery_states d WHERE d.state = 'DELIVERED' AND NOT EXISTS (SELECT 1 FROM webhook_attempts a WHERE a.event_id = d.event_id AND a.endpoint_id = d.endpoint_id AND a.status BETWEEN 200 AND 299)",
        ),
      ).to.equal(0);
      // A small output is kept in its row (migration 0018), as durable as the row; only the others are files.
      expect(count(db, 'SELECT COUNT(*) AS n FROM scan_results WHERE content IS NOT NULL AND length(content) != size')).to.equal(0);
      const referenced = new Set(
        (db.prepare('SELECT scan_id, file_name FROM scan_results WHERE content IS NULL').all() as Array<{ scan_id: string; file_name: string }>).map(
          (row) => `${row.scan_id}/${row.file_name}`,
        ),
      );
      const onDisk = existsSync(join(dataDir, 'results'))
        ? readdirSync(join(dataDir, 'results')).flatMap((scanDir) => readdirSync(join(dataDir, 'results', scanDir)).map((name) => `${scanDir}/${name}`))
        : [];
      expect(
        onDisk.filter((path) => !referenced.has(path)),
        'files no row references',
      ).to.deep.equal([]);
      expect(
        [...referenced].filter((path) => !onDisk.includes(path)),
        'recorded files that are missing',
      ).to.deep.equal([]);
    });
  });
});
