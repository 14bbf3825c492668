/**
 * sendStreamedList (GET /v1/scans): a page is written piece by piece, each
 * once the client has taken the last, and a client that goes stops the
 * reading, so a page in flight holds about one piece of memory.
 */
import { expect } from 'chai';
import express from 'express';
import type { AddressInfo } from 'node:net';
import { connect } from 'node:net';
import type { Server } from 'node:http';
import { sendStreamedList } from '../../src/http/send-rendered-list.js';

const PIECE = `"${'x'.repeat(64 * 1024)}"`;

describe('a list page streamed to its client', () => {
  let server: Server;
  let pulled = 0;
  let ended: Promise<void>;
  let end: () => void;

  /** Pieces without end: only the client's pace (or its going) stops the reading. */
  async function* endless(): AsyncGenerator<string> {
    try {
      for (;;) {
        pulled++;
        yield pulled === 1 ? PIECE : `,${PIECE}`;
      }
    } finally {
      end();
    }
  }

  beforeEach(async () => {
    pulled = 0;
    ended = new Promise((resolve) => (end = resolve));
    const app = express();
    app.get('/list', (_req, res) => void sendStreamedList(res, { pieces: endless(), nextPageToken: undefined }).catch(() => undefined));
    server = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
  });
  afterEach(() => new Promise((resolve) => server.close(resolve)));

  it('reads no further than its client takes, and stops when the client goes', async () => {
    const socket = connect((server.address() as AddressInfo).port, '127.0.0.1');
    socket.write('GET /list HTTP/1.1\r\nHost: test\r\n\r\n');
    let received = 0;
    await new Promise<void>((resolve) =>
      socket.on('data', (data) => {
        received += data.length;
        if (received > 256 * 1024) {
          socket.pause();
          resolve();
        }
      }),
    );
    // The client reads nothing more: the server waits for it instead of reading on. Socket buffers hold
    // some megabytes at most, so the reading stops long before 1,000 pieces (64 MB).
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(pulled).to.be.lessThan(1000);
    socket.destroy();
    await ended;
  });

  it('frames the pieces as { data: [...] } with the next page token', async () => {
    const app = express();
    async function* two(): AsyncGenerator<string> {
      yield '{"id":1}';
      yield ',{"id":2}';
    }
    app.get('/two', (_req, res) => void sendStreamedList(res, { pieces: two(), nextPageToken: 'next' }));
    const other = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => other.once('listening', resolve));
    try {
      const response = await fetch(`http://127.0.0.1:${(other.address() as AddressInfo).port}/two`);
      expect(response.headers.get('content-type')).to.equal('application/json; charset=utf-8');
      expect(await response.json()).to.deep.equal({ data: [{ id: 1 }, { id: 2 }], next_page_token: 'next' });
    } finally {
      await new Promise((resolve) => other.close(resolve));
    }
  });
});
