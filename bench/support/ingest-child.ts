/**
 * One measurement of bench/ingest.ts, in its own process: `bare` (saxes or
 * JSON.parse over the bytes), `parse` (Vigil's streaming parser), `ingest`
 * (the upload path: parse as the bytes arrive, store the file, create the
 * targets, record every finding on a real SQLite database; no webhook endpoint,
 * so no event is stored), `ingest-endpoint` (the same with one endpoint
 * registered: every event stored), `ingest-wal` (the upload of `ingest`,
 * counting what it wrote to the write-ahead log: see walWrites), `store-floor`
 * (the rows an upload of the file leaves in the database, written alone: see
 * storeFloor). Prints one JSON line.
 */
import { createReadStream } from 'node:fs';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SaxesParser } from 'saxes';
import { loadVigil as load } from './compiled.js';
import type { Finding, ScanType } from '../../src/domain/risks/finding.js';
import { peakRssMb as ownPeakRssMb } from '../../test/support/peak-rss.js';

const { loadSettings } = await load<typeof import('../../src/config/settings.js')>('config/settings.js');
const { composeCore } = await load<typeof import('../../src/main/composition-root.js')>('main/composition-root.js');
const { parserFor } = await load<typeof import('../../src/parsers/index.js')>('parsers/index.js');
const { inferTargets } = await load<typeof import('../../src/domain/imports/inferred-targets.js')>('domain/imports/inferred-targets.js');
const { newImportScan } = await load<typeof import('../../src/domain/imports/import-scan.js')>('domain/imports/import-scan.js');
const { timeOrderedUuid } = await load<typeof import('../../src/domain/time-ordered-uuid.js')>('domain/time-ordered-uuid.js');

const [format, mode, file] = process.argv.slice(2) as [string, string, string];
const scanType: ScanType = format === 'nmap' ? 'NMAP' : format === 'nuclei' ? 'NUCLEI' : 'OWASP_ZAP';
let peakRss = process.memoryUsage().rss;
const sampler = setInterval(() => (peakRss = Math.max(peakRss, process.memoryUsage().rss)), 5);

async function chunks(): Promise<Buffer[]> {
  const list: Buffer[] = [];
  for await (const chunk of createReadStream(file, { highWaterMark: 256 * 1024 })) list.push(chunk as Buffer);
  return list;
}

async function bare(): Promise<number> {
  if (format === 'nuclei') {
    // JSON.parse of each line of the whole text: what the parser did before it streamed.
    const parts: Buffer[] = [];
    for await (const chunk of createReadStream(file, { highWaterMark: 256 * 1024 })) parts.push(chunk as Buffer);
    let records = 0;
    for (const line of Buffer.concat(parts).toString('utf8').split('\n')) if (line.trim() !== '') records += JSON.parse(line) === null ? 0 : 1;
    return records;
  }
  if (format === 'zap') {
    const parts: Buffer[] = [];
    for await (const chunk of createReadStream(file, { highWaterMark: 256 * 1024 })) parts.push(chunk as Buffer);
    const parsed = JSON.parse(Buffer.concat(parts).toString('utf8')) as { site: unknown[] };
    return parsed.site.length;
  }
  const sax = new SaxesParser();
  let elements = 0;
  sax.on('opentag', () => elements++);
  for await (const chunk of createReadStream(file, { highWaterMark: 256 * 1024, encoding: 'utf8' })) sax.write(chunk as string);
  sax.close();
  return elements;
}

/**
 * The parser alone. nmap hands its findings to a sink in batches, as the
 * upload path has it do (into the store's staging there; here they are
 * counted and dropped), so the figure is the parser's own work and memory,
 * not that of holding 45,000 findings.
 */
async function parse(): Promise<number> {
  let handed = 0;
  const parser = parserFor(scanType, format === 'nmap' ? { findings: { add: (batch) => (handed += batch.length) } } : {});
  // JSON: read as the upload path reads it, so the peak is the parser's own (the streaming parser holds no copy of the file).
  if (format !== 'nmap') for await (const chunk of createReadStream(file, { highWaterMark: 256 * 1024 })) parser.write(chunk as Buffer);
  else for (const chunk of await chunks()) parser.write(chunk);
  const returned = parser.end().findings.length;
  return handed + returned;
}

/**
 * The upload path a user meets (POST /v1/imports without the HTTP framing):
 * the bytes stream through the parser as they arrive, then the result file is
 * stored, the targets created, every finding recorded in the risk history and
 * every event written, exactly as ImportsService does it on a real SQLite
 * database.
 */
async function ingest(setup: IngestSetup): Promise<number> {
  const { core, account, source } = setup;
  const upload = core.imports.newUpload();
  upload.useScanType(scanType);
  for await (const chunk of createReadStream(file, { highWaterMark: 256 * 1024 })) upload.write(chunk as Buffer);
  const parsed = upload.finish();
  const imported = await core.imports.importResult(
    account,
    { source_id: source.id, scan_type: scanType as 'NMAP' | 'OWASP_ZAP', target: format === 'zap' ? 'https://site-0.bench.example.com' : undefined },
    parsed,
  );
  return imported.scan.risks.newOpen.length;
}

/**
 * The running service an upload arrives at: its store opened (migrations
 * applied), an account and a source, and for `ingest-endpoint` one webhook
 * endpoint registered (events are stored only for their receivers; nothing is
 * delivered here, the dispatcher does not run). Not measured.
 */
function setUpIngest(withEndpoint: boolean) {
  const dir = mkdtempSync(join(tmpdir(), 'vigil-bench-db-'));
  const core = composeCore(loadSettings({ VIGIL_DATA_DIR: dir }));
  const account = core.accounts.createAccount({ name: 'bench', monthlyScanLimit: null }).account;
  const source = core.sources.create(account, { source_type: 'IMPORTED', name: 'bench' });
  if (withEndpoint) core.webhookEndpoints.add(account.id, 'https://hooks.bench.example.com/vigil');
  return { dir, core, account, source };
}
type IngestSetup = ReturnType<typeof setUpIngest>;

/**
 * What the upload path cannot go below on this machine: the rows an upload
 * of the file leaves (each new risk with its definition as JSON, and its
 * detection) written into Vigil's real schema, every index of it, as plain
 * prepared INSERTs, 1,000 risks a transaction as an upload chunks them, each
 * commit synchronous as Vigil's are. Nothing else: no parse (the findings
 * are parsed before the clock starts), no staging, no risk history, no file,
 * no events. Set up untimed, as the upload path would have it by then: the
 * targets recorded and the Scan inserted.
 */
async function setUpStoreFloor() {
  const setup = setUpIngest(false);
  const findings: Finding[] = [];
  const parser = parserFor(scanType, { findings: { add: (batch) => void findings.push(...batch) } });
  for (const chunk of await chunks()) parser.write(chunk);
  const result = parser.end();
  findings.push(...result.findings);
  const { core, account, source } = setup;
  const inferred = inferTargets(result.hosts, []);
  const at = new Date().toISOString();
  const targets = core.db.transaction(() =>
    inferred.targets.map((target) => ({ ...core.targets.recordUploaded(account, target.target, target), hosts: target.hosts })),
  )();
  const targetOf = new Map(targets.flatMap((target) => target.hosts.map((host) => [host, target.id] as const)));
  const scanId = timeOrderedUuid(new Date());
  core.scanRepository.insertImported(
    newImportScan({ id: scanId, accountId: account.id, type: 'NMAP', targets, source, skippedHosts: 0, resultId: scanId, contentType: 'application/xml', at }),
    [],
  );
  return { ...setup, findings, targetOf, scanId, at };
}

function storeFloor(floor: Awaited<ReturnType<typeof setUpStoreFloor>>): number {
  const { core, account, findings, targetOf, scanId, at } = floor;
  const risk = core.db.prepare(`INSERT INTO risks (id, account_id, target_id, scan_type, fingerprint, status, first_detected_at, last_detected_at,
    is_accepted, accepted_by, title, threat_level, qod, definition, created_at) VALUES (?, ?, ?, 'NMAP', ?, 'OPEN', ?, ?, 0, '[]', ?, ?, ?, ?, ?)`);
  const detection = core.db.prepare('INSERT INTO detections (scan_id, risk_id) VALUES (?, ?)');
  const chunk = core.db.transaction((start: number) => {
    for (const finding of findings.slice(start, start + FLOOR_RISKS_PER_TRANSACTION)) {
      const id = timeOrderedUuid(new Date());
      const { definition } = finding;
      const qod = definition.additional_info.qod;
      risk.run(
        id,
        account.id,
        targetOf.get(finding.location.host)!,
        finding.fingerprint,
        at,
        at,
        definition.title,
        definition.threat_level,
        typeof qod === 'number' ? Math.round(qod) : null,
        JSON.stringify(definition),
        at,
      );
      detection.run(scanId, id);
    }
  });
  for (let start = 0; start < findings.length; start += FLOOR_RISKS_PER_TRANSACTION) chunk.immediate(start);
  return findings.length;
}

/** RiskHistory's FINDINGS_PER_TRANSACTION: an upload's chunks. */
const FLOOR_RISKS_PER_TRANSACTION = 1000;

/**
 * `ingest-wal`: the write-ahead log emptied before the upload and SQLite's
 * automatic checkpoints off during it, so that the log keeps every frame the
 * upload wrote. A page written at two commits is two frames: the count says
 * how often each page of what the upload stored was written, nearly the
 * same in every run (chunks also end by time) where the upload's time varies
 * by 10% (its time is not comparable: no checkpoint runs). Each frame is a page number and the
 * database's size after it (not zero: the commit's last frame); dbstat
 * names the B-tree of each page.
 */
function walWrites(setup: IngestSetup): WalWrites {
  const log = readFileSync(join(setup.dir, 'vigil.db-wal'));
  const pageSize = log.readUInt32BE(8);
  const pages: number[] = [];
  let commits = 0;
  for (let offset = 32; offset + 24 + pageSize <= log.length; offset += 24 + pageSize) {
    pages.push(log.readUInt32BE(offset));
    if (log.readUInt32BE(offset + 4) !== 0) commits++;
  }
  const treeOf = new Map((setup.core.db.prepare('SELECT pageno, name FROM dbstat').raw().all() as Array<[number, string]>).map(([page, name]) => [page, name]));
  const byTree = new Map<string, { frames: number; pages: Set<number> }>();
  for (const page of pages) {
    const name = treeOf.get(page) ?? '(free)';
    const tree = byTree.get(name) ?? byTree.set(name, { frames: 0, pages: new Set() }).get(name)!;
    tree.frames++;
    tree.pages.add(page);
  }
  return {
    frames: pages.length,
    commits,
    databasePages: setup.core.db.pragma('page_count', { simple: true }) as number,
    trees: [...byTree]
      .map(([name, tree]) => ({ name, frames: tree.frames, pages: tree.pages.size }))
      .sort((a, b) => b.frames - a.frames)
      .slice(0, 12),
  };
}
interface WalWrites {
  frames: number;
  commits: number;
  databasePages: number;
  /** The B-trees written most: frames, and distinct pages among them. */
  trees: Array<{ name: string; frames: number; pages: number }>;
}

const floor = mode === 'store-floor' ? await setUpStoreFloor() : undefined;
const setup = mode.startsWith('ingest') ? setUpIngest(mode === 'ingest-endpoint') : floor;
if (mode === 'ingest-wal') {
  setup!.core.db.pragma('wal_checkpoint(TRUNCATE)');
  setup!.core.db.pragma('wal_autocheckpoint = 0');
}
const baselineRss = process.memoryUsage().rss;
const started = process.hrtime.bigint();
const cpuBefore = process.cpuUsage();
const count = mode === 'bare' ? await bare() : mode === 'parse' ? await parse() : floor !== undefined ? storeFloor(floor) : await ingest(setup!);
const seconds = Number(process.hrtime.bigint() - started) / 1e9;
const cpu = process.cpuUsage(cpuBefore);
const cpuSeconds = (cpu.user + cpu.system) / 1e6;
const wal = mode === 'ingest-wal' ? walWrites(setup!) : undefined;
clearInterval(sampler);
peakRss = Math.max(peakRss, process.memoryUsage().rss, ownPeakRssMb() * 1024 * 1024);
if (setup !== undefined) {
  setup.core.db.close();
  rmSync(setup.dir, { recursive: true, force: true });
}
console.log(
  JSON.stringify({
    mode,
    seconds,
    cpuSeconds,
    findings: mode.startsWith('bare') ? 0 : count,
    peakRssMb: peakRss / 1024 / 1024,
    baselineRssMb: baselineRss / 1024 / 1024,
    wal,
  }),
);
