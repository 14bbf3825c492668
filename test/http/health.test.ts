/**
 * The probes (issue 28): /livez answers while the process does, /readyz only
 * when migrations are applied, the store can take writes and the runtime has
 * started, naming what fails otherwise; /healthz keeps CONTRACT.md's meaning.
 */
import { expect } from 'chai';
import BetterSqlite3 from 'better-sqlite3';
import { join } from 'node:path';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { healthRouter } from '../../src/http/health.js';
import { TestService } from '../support/test-service.js';
import { tempDir } from '../support/temp-dir.js';
import { openDatabase } from '../../src/store/database.js';
import { migrationsCheck, storeWritableCheck } from '../../src/store/store-health.js';
import { MIGRATIONS } from '../../src/store/migrations/index.js';

describe('probes', () => {
  let service: TestService;
  before(async () => {
    service = await TestService.start();
  });
  after(async () => service.stop());

  it('GET /livez answers 200 without a key', async () => {
    const response = await service.get('/livez', { key: null });
    expect([response.status, response.body]).to.deep.equal([200, { status: 'ok' }]);
  });

  it('GET /readyz answers 200 once migrations are applied, the store is writable and the runtime has started', async () => {
    const response = await service.get('/readyz', { key: null });
    expect(response.status).to.equal(200);
    expect(response.body.status).to.equal('ready');
    expect(response.body.checks.map((check: { name: string; ok: boolean }) => [check.name, check.ok])).to.deep.equal([
      ['accepting', true],
      ['migrations', true],
      ['store', true],
      ['runtime', true],
    ]);
  });

  it('GET /readyz answers 503 naming every failing check, while /livez and /healthz keep their own meaning', async () => {
    const app = express().use(
      healthRouter({
        isAccepting: () => false,
        readiness: async () => [
          { name: 'runtime', ok: false, message: 'the kubernetes runtime is starting (informers listing)' },
          { name: 'store', ok: true },
        ],
      }),
    );
    const server = app.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      const ready = await fetch(`${base}/readyz`);
      expect(ready.status).to.equal(503);
      expect(await ready.json()).to.deep.equal({
        status: 'not ready',
        checks: [
          { name: 'accepting', ok: false, message: 'the service is shutting down' },
          { name: 'runtime', ok: false, message: 'the kubernetes runtime is starting (informers listing)' },
          { name: 'store', ok: true },
        ],
      });
      expect((await fetch(`${base}/livez`)).status).to.equal(200);
      expect((await fetch(`${base}/healthz`)).status).to.equal(503);
    } finally {
      server.close();
    }
  });
});

describe('store readiness checks', () => {
  it('the migrations check fails on a database behind this build, naming both versions', () => {
    const dir = tempDir();
    try {
      const db = openDatabase(dir.path, MIGRATIONS.slice(0, 3));
      const latest = Math.max(...MIGRATIONS.map((migration) => migration.version));
      expect(migrationsCheck(db)).to.deep.equal({ name: 'migrations', ok: false, message: `the database is at schema version 3, this build needs ${latest}` });
      db.close();
      const current = openDatabase(dir.path);
      expect(migrationsCheck(current)).to.deep.equal({ name: 'migrations', ok: true });
      current.close();
    } finally {
      dir.remove();
    }
  });

  it('the store check fails for a closed or read-only database and a missing data directory', async () => {
    const dir = tempDir();
    try {
      const db = openDatabase(dir.path);
      expect(await storeWritableCheck(db, dir.path)).to.deep.equal({ name: 'store', ok: true });
      const readOnly = new BetterSqlite3(join(dir.path, 'vigil.db'), { readonly: true });
      expect((await storeWritableCheck(readOnly, dir.path)).ok).to.equal(false);
      readOnly.close();
      expect(await storeWritableCheck(db, join(dir.path, 'missing'))).to.deep.equal({
        name: 'store',
        ok: false,
        message: 'the data directory cannot be written: ENOENT',
      });
      db.close();
      expect(await storeWritableCheck(db, dir.path)).to.deep.equal({ name: 'store', ok: false, message: 'the database is not open for writing' });
    } finally {
      dir.remove();
    }
  });
});
