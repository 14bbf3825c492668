/**
 * The in-pod uploader keeps trying while Vigil restarts (issue 13): refused
 * connections and 5xx answers are retried with backoff for ten minutes of
 * (injected) time, a 4xx other than 429 is final at once. A real HTTP
 * listener plays Vigil going away and coming back.
 */
import { expect } from 'chai';
import { createServer, type Server } from 'node:http';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { sendWithRetries, UPLOAD_RETRY_WINDOW_MS, type RetryTime } from '../../src/cli/upload-result.js';
import { tempDir } from '../support/temp-dir.js';

function fakeTime(): RetryTime & { elapsed: () => number } {
  let now = 0;
  return { now: () => now, sleep: async (ms) => void (now += ms), elapsed: () => now };
}

describe('vigil upload-result retries', () => {
  let server: Server;
  let url: string;
  let answers: number[];
  let received: number;
  const dir = tempDir();
  const file = join(dir.path, 'nmap.xml');
  writeFileSync(file, '<nmaprun/>');

  beforeEach(async () => {
    answers = [];
    received = 0;
    server = createServer((request, response) => {
      request.resume();
      request.on('end', () => {
        received += 1;
        response.writeHead(answers.shift() ?? 204).end();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/internal/v1/scans/s/results/nmap.xml`;
  });
  afterEach(() => new Promise<void>((resolve) => server.close(() => resolve())));
  after(() => dir.remove());

  it('keeps retrying through five minutes of 503s (a restart) and then succeeds', async () => {
    answers = Array.from({ length: 14 }, () => 503);
    const time = fakeTime();
    const attempts = await sendWithRetries(url, 'token', file, time);
    expect(attempts).to.equal(15);
    expect(time.elapsed()).to.be.greaterThan(60_000).and.lessThan(UPLOAD_RETRY_WINDOW_MS);
  });

  it('retries refused connections (Vigil not listening) and gives up only after the ten-minute window', async () => {
    const closedUrl = url.replace(/:\d+\//, ':1/');
    const time = fakeTime();
    let thrown: unknown;
    await sendWithRetries(closedUrl, 'token', file, time).catch((error: unknown) => (thrown = error));
    expect(thrown).to.be.instanceOf(Error);
    expect(time.elapsed()).to.be.greaterThan(UPLOAD_RETRY_WINDOW_MS - 30_000).and.at.most(UPLOAD_RETRY_WINDOW_MS);
  });

  it('does not retry a refused token (401): the answer is final', async () => {
    answers = [401];
    const time = fakeTime();
    let thrown: unknown;
    await sendWithRetries(url, 'token', file, time).catch((error: unknown) => (thrown = error));
    expect(String(thrown)).to.include('401');
    expect(received).to.equal(1);
    expect(time.elapsed()).to.equal(0);
  });
});
