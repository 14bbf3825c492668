/**
 * A multipart file part reaches its reader a piece of at most 16 KiB per
 * turn of the event loop: a socket's poll hands over everything it holds,
 * and parsing a few megabytes of a result file in one turn held the loop
 * 80-180 ms among a million risks (bench/scale.ts), a 64 KiB chunk 90-170 ms.
 */
import { expect } from 'chai';
import express from 'express';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readMultipartForm } from '../../src/http/multipart-form.js';
import { TurnCounter } from '../support/turn-counter.js';

describe('a multipart file part, read a piece per turn', () => {
  let server: Server;
  let turnsOfChunks: number[];
  let pieces: Buffer[];

  beforeEach(async () => {
    turnsOfChunks = [];
    pieces = [];
    const app = express();
    app.post('/upload', async (req, res) => {
      const turns = new TurnCounter();
      const limits = { fileField: 'file', maxFileBytes: 64 * 1024 * 1024, maxFields: 4, maxFieldBytes: 1024 };
      const form = await readMultipartForm(req, res, limits, {
        onField: () => undefined,
        onFileChunk: (chunk) => {
          turnsOfChunks.push(turns.turn);
          pieces.push(Buffer.from(chunk));
        },
      });
      turns.stop();
      res.json({ hasFile: form.hasFile });
    });
    server = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
  });
  afterEach(() => new Promise((resolve) => server.close(resolve)));

  it('hands the file over in pieces of at most 16 KiB, each in a turn of its own, every byte in order', async () => {
    const form = new FormData();
    const file = Buffer.from(Array.from({ length: 4 * 1024 * 1024 }, (_, index) => (index * 7919) % 251));
    form.set('file', new Blob([file]), 'result.xml');
    const response = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/upload`, { method: 'POST', body: form });
    expect(await response.json()).to.deep.equal({ hasFile: true });
    expect(Buffer.concat(pieces).equals(file), 'the file, byte for byte').to.equal(true);
    expect(Math.max(...pieces.map((piece) => piece.length)), 'largest piece').to.be.at.most(16 * 1024);
    expect(turnsOfChunks.length, 'pieces').to.be.at.least(file.length / (16 * 1024));
    const sameTurn = turnsOfChunks.filter((turn, index) => index > 0 && turn === turnsOfChunks[index - 1]);
    expect(sameTurn, 'chunks handed over in the turn of the one before').to.deep.equal([]);
  });
});
