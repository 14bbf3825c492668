/**
 * A multipart file part reaches its reader one chunk per turn of the event
 * loop: a socket's poll hands over everything it holds, and parsing a few
 * megabytes of a result file in one turn held the loop 80-180 ms among a
 * million risks (bench/scale.ts).
 */
import { expect } from 'chai';
import express from 'express';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readMultipartForm } from '../../src/http/multipart-form.js';

describe('a multipart file part, read one chunk per turn', () => {
  let server: Server;
  let turnsOfChunks: number[];
  let bytes: number;

  beforeEach(async () => {
    turnsOfChunks = [];
    bytes = 0;
    const app = express();
    app.post('/upload', async (req, res) => {
      let turn = 0;
      let counting = true;
      const count = () => {
        turn++;
        if (counting) setImmediate(count);
      };
      setImmediate(count);
      const limits = { fileField: 'file', maxFileBytes: 64 * 1024 * 1024, maxFields: 4, maxFieldBytes: 1024 };
      const form = await readMultipartForm(req, res, limits, {
        onField: () => undefined,
        onFileChunk: (chunk) => {
          turnsOfChunks.push(turn);
          bytes += chunk.length;
        },
      });
      counting = false;
      res.json({ hasFile: form.hasFile });
    });
    server = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
  });
  afterEach(() => new Promise((resolve) => server.close(resolve)));

  it('hands each chunk over in a turn of its own, and every byte', async () => {
    const form = new FormData();
    const file = Buffer.alloc(4 * 1024 * 1024, 'a');
    form.set('file', new Blob([file]), 'result.xml');
    const response = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/upload`, { method: 'POST', body: form });
    expect(await response.json()).to.deep.equal({ hasFile: true });
    expect(bytes).to.equal(file.length);
    expect(turnsOfChunks.length, 'chunks').to.be.greaterThan(4);
    const sameTurn = turnsOfChunks.filter((turn, index) => index > 0 && turn === turnsOfChunks[index - 1]);
    expect(sameTurn, 'chunks handed over in the turn of the one before').to.deep.equal([]);
  });
});
