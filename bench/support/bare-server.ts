/**
 * The baseline of the Targets list benchmark: a bare express 5 app that
 * answers every GET with the same page of targets, held in memory, through
 * res.json(): no auth, no validation, no store. It prints
 * `listening <port>` on stdout once bound. The Scans benchmark's baseline
 * for its POST burst is the same app: every POST's JSON body is read
 * (express.json()) and answered with a new QUEUED scan's id, as Vigil's
 * POST /v1/scans answers, with nothing stored.
 *
 * Usage: node --import tsx bench/support/bare-server.ts <objects.json> [port]
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import express from 'express';

const [file, portArg = '0'] = process.argv.slice(2);
if (file === undefined) {
  process.stderr.write('usage: bare-server.ts <objects.json> [port]\n');
  process.exit(2);
}
const objects = JSON.parse(readFileSync(file, 'utf8')) as unknown[];

const app = express();
app.disable('x-powered-by');
app.set('etag', false);
app.get('/{*path}', (_req, res) => {
  res.json({ data: objects });
});
app.post('/{*path}', express.json(), (_req, res) => {
  res.json({ data: { id: randomUUID(), state: 'QUEUED' } });
});

const server = app.listen(Number(portArg), '127.0.0.1', () => {
  const address = server.address();
  process.stdout.write(`listening ${typeof address === 'object' && address !== null ? address.port : portArg}\n`);
});
for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.once(signal, () => {
    server.close(() => process.exit(0));
    server.closeAllConnections();
  });
}
