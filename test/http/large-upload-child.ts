/**
 * Run by large-upload.test.ts in a child process: the real service (its
 * HTTP server, UploadsService, the data directory on disk) with the default
 * 256 MiB result-file limit. Prints one JSON line with the upload URL and
 * token, then waits; the parent PUTs the file from its own process. On the
 * line "collect" on stdin it does what the scan controller does with an
 * in-cluster scan's files: hands the staged file to the collector (parsed
 * as read from disk) and stores it under results/. Prints one JSON line with
 * the findings, the stored size and the peak RSS (VmHWM) after the upload
 * and after the collection (Linux: /proc/self/status).
 */
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { collectFindings } from '../../src/app/collector.js';
import type { Scan } from '../../src/domain/scans/scan.js';
import { SqliteRecordingStaging } from '../../src/store/recording-staging.js';
import { FileSystemResultFiles } from '../../src/store/result-files.js';
import { peakRssMb } from '../support/peak-rss.js';
import { TestService } from '../support/test-service.js';

const service = await TestService.start();
// A scan that never runs (the account has no scans left), so only this script touches its files.
const capped = service.createAccount('capped', { monthlyScanLimit: 0 });
const scanId = (await service.post('/v1/scans', { type: 'OWASP_ZAP', targets: ['https://www.example.com'] }, { key: capped.apiKey })).body.data.id as string;
const token = service.vigil.uploads.issueToken(scanId);
// Started: what it holds now (the peak so far includes start-up work, the OpenAPI validator's compilation).
const rssMb = Number(/^VmRSS:\s+(\d+) kB$/m.exec(readFileSync('/proc/self/status', 'utf8'))?.[1] ?? Number.NaN) / 1024;
console.log(JSON.stringify({ url: `${service.baseUrl}/internal/v1/scans/${scanId}/results/zap.json`, token, startMb: rssMb, startPeakMb: peakRssMb() }));

const lines = createInterface({ input: process.stdin });
const [line] = (await once(lines, 'line')) as [string];
if (line !== 'collect') throw new Error(`unexpected ${line}`);
const uploadMb = peakRssMb();
const staged = await service.vigil.uploads.staged(scanId, [{ file: 'zap.json', contentType: 'application/json' }]);
if ('missing' in staged) throw new Error(`${staged.missing} is missing`);
const scan = {
  id: scanId,
  type: 'OWASP_ZAP',
  resolvedTargets: [{ targetId: 'target-1', target: 'https://www.example.com', addresses: ['93.184.216.34'] }],
} as unknown as Scan;
// The store's staging on the service's connection, as the controller's.
const staging = new SqliteRecordingStaging(service.vigil.db);
const collected = await collectFindings(scan, staged.outputs, staging, service.settings.resultFileMaxBytes);
const results = new FileSystemResultFiles(join(service.settings.dataDir, 'results'));
const output = staged.outputs[0]!;
const stored = await results.save(scanId, output.file, output.content instanceof Uint8Array ? output.content : output.content());
console.log(JSON.stringify({ findings: collected.byTarget.countOf('target-1'), stored, uploadMb, collectMb: peakRssMb() }));
staging.drop(scanId);
lines.close();
await service.stop();
