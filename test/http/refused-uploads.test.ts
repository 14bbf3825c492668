/**
 * A refused upload's answer reaches the client (issue 26): the refusal is
 * written whole with `Connection: close` and the rest of the body is read
 * and discarded within bounds (src/http/refused-body.ts), so Node's fetch no
 * longer gets EPIPE and curl prints the 400 instead of a closed connection.
 * Nothing of the refused body is stored.
 */
import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { readdirSync, writeFileSync } from 'node:fs';
import { createServer, request } from 'node:http';
import { connect, type Socket } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { Request } from 'express';
import { discardUnreadBody, type LingerOutcome } from '../../src/http/refused-body.js';
import { FakeTimers } from '../support/fake-timers.js';
import { TestService } from '../support/test-service.js';
import { tempDir } from '../support/temp-dir.js';
import { probeUntil } from '../support/wait.js';

const MIB = 1024 * 1024;
const NUCLEI_REFUSAL = /^scan_type 'NUCLEI' cannot be uploaded/;

let service: TestService;
let sourceId: string;
const files = tempDir();

before(async () => {
  service = await TestService.start();
  sourceId = (await service.post('/v1/sources', { source_type: 'IMPORTED', name: 'refusals' })).body.data.id;
});
after(async () => {
  await service.stop();
  files.remove();
});

function resultFolders(): string[] {
  try {
    return readdirSync(join(service.settings.dataDir, 'results'));
  } catch {
    return [];
  }
}

/** A multipart body streamed chunk by chunk, so the server refuses it while it is still arriving. */
function streamedNucleiForm(bytes: number): { body: ReadableStream<Uint8Array>; contentType: string } {
  const boundary = 'refused-upload';
  const head = Buffer.from(
    `--${boundary}\r\nContent-Disposition: form-data; name="source_id"\r\n\r\n${sourceId}\r\n` +
      `--${boundary}\r\nContent-Disposition: form-data; name="scan_type"\r\n\r\nNUCLEI\r\n` +
      `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="nuclei.json"\r\n\r\n`,
  );
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
  const chunk = Buffer.alloc(64 * 1024, 'x');
  let sent = 0;
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (sent === 0) controller.enqueue(head);
      if (sent >= bytes) {
        controller.enqueue(tail);
        controller.close();
        return;
      }
      sent += chunk.length;
      controller.enqueue(chunk);
    },
  });
  return { body, contentType: `multipart/form-data; boundary=${boundary}` };
}

describe('refused uploads reach the client', () => {
  it('answers a 4 MiB NUCLEI upload from fetch with the 400 and its error, ten times out of ten, storing nothing', async function () {
    this.timeout(60_000);
    const folders = resultFolders();
    for (let attempt = 0; attempt < 10; attempt++) {
      const { body, contentType } = streamedNucleiForm(4 * MIB);
      const response = await fetch(`${service.baseUrl}/v1/results`, {
        method: 'POST',
        headers: { 'X-SERVICE-API-KEY': service.apiKey, 'Content-Type': contentType },
        body,
        duplex: 'half',
      } as RequestInit);
      expect(response.status).to.equal(400);
      expect(response.headers.get('connection')).to.equal('close');
      const answer = (await response.json()) as { error: string };
      expect(answer.error).to.match(NUCLEI_REFUSAL);
      service.validateResponse('POST', '/v1/results', 400, answer);
    }
    expect(resultFolders()).to.deep.equal(folders);
    expect((await service.get('/v1/scans')).body.data).to.deep.equal([]);
  });

  it('answers curl (Expect: 100-continue) sending a 20 MiB file with the 400 error body', async function () {
    this.timeout(60_000);
    const path = join(files.path, 'nuclei-20mib.json');
    writeFileSync(path, Buffer.alloc(20 * MIB, 'x'));
    const folders = resultFolders();
    const { stdout } = await promisify(execFile)('curl', [
      '-sS',
      '-w',
      '\n%{http_code}',
      '-H',
      `X-SERVICE-API-KEY: ${service.apiKey}`,
      '-F',
      `source_id=${sourceId}`,
      '-F',
      'scan_type=NUCLEI',
      '-F',
      `file=@${path}`,
      `${service.baseUrl}/v1/results`,
    ]);
    const [body, status] = stdout.split('\n');
    expect(status).to.equal('400');
    expect(JSON.parse(body!).error).to.match(NUCLEI_REFUSAL);
    expect(resultFolders()).to.deep.equal(folders);
  });

  it('answers curl sending a 20 MiB file with a wrong key, to /v1/results and to an attachment, with the 401 error body', async function () {
    this.timeout(60_000);
    const path = join(files.path, 'wrong-key-20mib.side');
    writeFileSync(path, Buffer.alloc(20 * MIB, 'x'));
    for (const route of ['/v1/results', '/v1/targets/00000000-0000-4000-8000-000000000000/auth/selenium']) {
      const { stdout } = await promisify(execFile)('curl', [
        '-sS',
        '-w',
        '\n%{http_code}',
        '-H',
        'X-SERVICE-API-KEY: vgl_wrong',
        '-F',
        `file=@${path}`,
        `${service.baseUrl}${route}`,
      ]);
      const [body, status] = stdout.split('\n');
      expect(status, route).to.equal('401');
      expect(JSON.parse(body!).error, route).to.be.a('string').that.is.not.empty;
    }
  });

  it('cuts a refused body longer than the bound (25 MiB after the refusal) by closing the connection, storing nothing', async function () {
    this.timeout(60_000);
    const folders = resultFolders();
    // A raw socket, which, unlike Node's client, goes on sending after the answer, as a hostile client would.
    const { body, contentType } = streamedNucleiForm(40 * MIB);
    const outcome = await new Promise<{ status?: number; closed: boolean }>((resolve) => {
      const socket = connect(Number(new URL(service.baseUrl).port), '127.0.0.1');
      let answer = '';
      const status = (): number | undefined => (answer.startsWith('HTTP/1.1 ') ? Number(answer.slice(9, 12)) : undefined);
      socket.on('data', (data: Buffer) => (answer += data.toString('latin1')));
      socket.on('error', () => undefined);
      socket.on('close', () => resolve({ status: status(), closed: true }));
      socket.write(
        `POST /v1/results HTTP/1.1\r\nHost: 127.0.0.1\r\nX-SERVICE-API-KEY: ${service.apiKey}\r\nContent-Type: ${contentType}\r\nContent-Length: ${60 * MIB}\r\n\r\n`,
      );
      void (async () => {
        const reader = body.getReader();
        for (let next = await reader.read(); !next.done && !socket.destroyed; next = await reader.read()) {
          if (!socket.write(next.value)) await drainedOrClosed(socket);
        }
      })();
    });
    // The answer went out first; the connection was closed before the 40 MiB were all sent.
    expect(outcome).to.deep.equal({ status: 400, closed: true });
    expect(resultFolders()).to.deep.equal(folders);
    const logged = await probeUntil(() =>
      service.logLines.some((line) => line.includes('refused request body discarded') && line.includes('too large')) ? true : undefined,
    );
    expect(logged).to.equal(true);
  });
});

function drainedOrClosed(req: Socket): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      req.off('drain', done).off('close', done);
      resolve();
    };
    req.on('drain', done).on('close', done);
  });
}

describe('discarding a refused body within its bounds', () => {
  /** A server whose one request is discarded at once; resolves with its outcome once the client has sent `sent` bytes and stalls. */
  async function lingerOn(send: (req: ReturnType<typeof request>) => void, timers: FakeTimers, bounds = { maxBytes: 1024, totalMs: 30_000, idleMs: 5_000 }) {
    let outcome!: Promise<LingerOutcome>;
    let started!: () => void;
    const discarding = new Promise<void>((resolve) => (started = resolve));
    const server = createServer((req) => {
      outcome = discardUnreadBody(req as Request, bounds, timers);
      started();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const client = request({ port: (server.address() as { port: number }).port, host: '127.0.0.1', method: 'POST', headers: { 'Content-Length': '100000' } });
    client.on('error', () => undefined);
    send(client);
    await discarding;
    return {
      outcome: () => outcome,
      close: () => {
        client.destroy();
        server.close();
      },
    };
  }

  it('stops when no byte arrives for the idle bound', async () => {
    const timers = new FakeTimers();
    const linger = await lingerOn((client) => client.write('a'.repeat(10)), timers);
    timers.advance(5_000);
    expect(await linger.outcome()).to.equal('idle');
    linger.close();
  });

  it('stops at the total bound even while bytes keep arriving', async () => {
    const timers = new FakeTimers();
    const linger = await lingerOn((client) => client.write('a'), timers, { maxBytes: 1024, totalMs: 30_000, idleMs: 60_000 });
    timers.advance(30_000);
    expect(await linger.outcome()).to.equal('timed out');
    linger.close();
  });

  it('stops past the byte bound', async () => {
    const timers = new FakeTimers();
    const linger = await lingerOn((client) => client.write(Buffer.alloc(4096)), timers);
    expect(await linger.outcome()).to.equal('too large');
    linger.close();
  });
});
