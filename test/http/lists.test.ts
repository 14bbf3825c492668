import { expect } from 'chai';
import { SqliteTargetRepository } from '../../src/store/targets-repository.js';
import { aTarget } from '../support/targets.js';
import { TestService } from '../support/test-service.js';

describe('HTTP common list behaviour (GET /v1/targets)', () => {
  let service: TestService;

  beforeEach(async () => {
    service = await TestService.start();
  });
  afterEach(async () => {
    await service.stop();
  });

  async function create(target: string, fields: Record<string, unknown> = {}): Promise<{ id: string; target: string }> {
    const response = await service.post('/v1/targets', { target, ...fields });
    expect(response.status, response.text).to.equal(200);
    return response.body.data;
  }

  /** Seeds many targets straight into the store (the API path is tested elsewhere; this is about paging). */
  function seed(count: number): void {
    const repository = new SqliteTargetRepository(service.vigil.db);
    service.vigil.db.transaction(() => {
      for (let i = 0; i < count; i++) {
        repository.insert(aTarget(service.accountId, `host-${String(i).padStart(4, '0')}.example.com`));
      }
    })();
  }

  async function allPages(query: Record<string, string | number> = {}): Promise<{ ids: string[]; pages: number }> {
    const ids: string[] = [];
    let token: string | undefined;
    let pages = 0;
    do {
      const response = await service.get('/v1/targets', { query: { ...query, page_token: token } });
      expect(response.status, response.text).to.equal(200);
      ids.push(...response.body.data.map((target: { id: string }) => target.id));
      token = response.body.next_page_token;
      pages++;
    } while (token !== undefined && pages < 1000);
    return { ids, pages };
  }

  it('lists newest first', async () => {
    const first = await create('a.example.com');
    const second = await create('b.example.com');
    const third = await create('c.example.com');
    const response = await service.get('/v1/targets');
    expect(response.body.data.map((t: { id: string }) => t.id)).to.deep.equal([third.id, second.id, first.id]);
    expect(response.body).not.to.have.property('next_page_token');
  });

  it('pages with next_page_token until the last page, which has none', async () => {
    const created = [];
    for (const name of ['a', 'b', 'c', 'd', 'e']) created.push(await create(`${name}.example.com`));
    const first = await service.get('/v1/targets', { query: { page_size: 2 } });
    expect(first.body.data).to.have.length(2);
    expect(first.body.next_page_token).to.be.a('string');
    const { ids, pages } = await allPages({ page_size: 2 });
    expect(pages).to.equal(3);
    expect(ids).to.deep.equal(created.map((t) => t.id).reverse());
  });

  it('omits next_page_token when the page is exactly full and nothing follows', async () => {
    await create('a.example.com');
    await create('b.example.com');
    const response = await service.get('/v1/targets', { query: { page_size: 2 } });
    expect(response.body.data).to.have.length(2);
    expect(response.body).not.to.have.property('next_page_token');
  });

  const pageSizes: Array<[string, number | string, number]> = [
    ['1 gives one item', 1, 1],
    ['499 gives 499 items', 499, 499],
    ['500 is outside 1..499 and gives the default of 500', 500, 500],
    ['1000 gives the default of 500', 1000, 500],
    ['0 gives the default of 500', 0, 500],
    ['-3 gives the default of 500', -3, 500],
  ];
  for (const [what, size, expected] of pageSizes) {
    it(`page_size ${what}`, async () => {
      seed(501);
      const response = await service.get('/v1/targets', { query: { page_size: size } });
      expect(response.status).to.equal(200);
      expect(response.body.data).to.have.length(expected);
      expect(response.body.next_page_token).to.be.a('string');
    });
  }

  it('without page_size returns at most 500', async () => {
    seed(501);
    const { ids, pages } = await allPages();
    expect(pages).to.equal(2);
    expect(new Set(ids).size).to.equal(501);
  });

  it('refuses a page_size that is not a number with 400', async () => {
    const response = await service.get('/v1/targets', { query: { page_size: 'many' } });
    expect(response.status).to.equal(400);
    expect(response.body.error).to.match(/page_size/);
  });

  it('keeps pages correct while targets are inserted between requests', async () => {
    for (const name of ['a', 'b', 'c', 'd']) await create(`${name}.example.com`);
    const first = await service.get('/v1/targets', { query: { page_size: 2 } });
    await create('new-1.example.com');
    await create('new-2.example.com');
    const second = await service.get('/v1/targets', { query: { page_size: 2, page_token: first.body.next_page_token } });
    const seen = [...first.body.data, ...second.body.data].map((t: { target: string }) => t.target);
    expect(seen).to.deep.equal(['d.example.com', 'c.example.com', 'b.example.com', 'a.example.com']);
  });

  describe('page_token', () => {
    it('refuses a garbled token with 400', async () => {
      for (const token of ['garbage', 'a.b', 'a.b.c', '%%%']) {
        const response = await service.get('/v1/targets', { query: { page_token: token } });
        expect(response.status, token).to.equal(400);
        expect(response.body.error).to.match(/page_token/);
      }
    });

    it('refuses a forged token (payload changed, signature kept) with 400', async () => {
      for (const name of ['a', 'b', 'c']) await create(`${name}.example.com`);
      const token: string = (await service.get('/v1/targets', { query: { page_size: 1 } })).body.next_page_token;
      const [payload, signature] = token.split('.');
      const decoded = JSON.parse(Buffer.from(payload!, 'base64url').toString());
      decoded[1][0] = 999999;
      const forged = `${Buffer.from(JSON.stringify(decoded)).toString('base64url')}.${signature}`;
      const response = await service.get('/v1/targets', { query: { page_token: forged } });
      expect(response.status).to.equal(400);
    });

    it("refuses another account's token with 400", async () => {
      const other = service.createAccount('other');
      for (const name of ['a', 'b']) await service.post('/v1/targets', { target: `${name}.example.com` }, { key: other.apiKey });
      const theirs: string = (await service.get('/v1/targets', { key: other.apiKey, query: { page_size: 1 } })).body.next_page_token;
      expect((await service.get('/v1/targets', { query: { page_token: theirs } })).status).to.equal(400);
    });

    it('refuses a token used with a different sort with 400 naming the sort', async () => {
      for (const name of ['a', 'b']) await create(`${name}.example.com`);
      const token: string = (await service.get('/v1/targets', { query: { page_size: 1 } })).body.next_page_token;
      const response = await service.get('/v1/targets', { query: { page_token: token, sort: 'label asc' } });
      expect(response.status).to.equal(400);
      expect(response.body.error).to.match(/sort/);
    });
  });

  describe('filters', () => {
    beforeEach(async () => {
      await create('a.example.com', { label: 'Alpha', tags: ['prod', 'eu'] });
      await create('b.example.com', { label: 'Beta', tags: ['staging'] });
      await create('https://c.example.com', { label: 'Gamma', tags: ['prod'] });
    });

    async function targetsWith(filters: unknown): Promise<string[]> {
      const response = await service.get('/v1/targets', { query: { filters: JSON.stringify(filters) } });
      expect(response.status, response.text).to.equal(200);
      return response.body.data.map((t: { target: string }) => t.target).sort();
    }

    it('filters by tags, matching any of them, case-insensitively', async () => {
      expect(await targetsWith({ tags: ['PROD'] })).to.deep.equal(['a.example.com', 'https://c.example.com']);
      expect(await targetsWith({ tags: ['eu', 'staging'] })).to.deep.equal(['a.example.com', 'b.example.com']);
    });

    it('filters by label and by target address', async () => {
      expect(await targetsWith({ label: ['Beta'] })).to.deep.equal(['b.example.com']);
      expect(await targetsWith({ target: ['https://c.example.com', 'a.example.com'] })).to.deep.equal(['a.example.com', 'https://c.example.com']);
    });

    it('combines keys with AND', async () => {
      expect(await targetsWith({ tags: ['prod'], label: ['Gamma'] })).to.deep.equal(['https://c.example.com']);
    });

    it('treats an empty array as no filter on that key', async () => {
      expect(await targetsWith({ tags: [] })).to.have.length(3);
    });

    it('reads the bracket form (filters[tags][0]=prod) as the JSON form, on targets and on the other lists', async () => {
      const raw = async (path: string) => {
        const response = await service.get(path);
        expect(response.status, `${path}: ${response.text}`).to.equal(200);
        return response.body.data as Array<{ id: string; target?: string }>;
      };
      expect((await raw('/v1/targets?filters[tags][0]=PROD&filters[label][]=Gamma')).map((t) => t.target)).to.deep.equal(['https://c.example.com']);
      expect((await raw('/v1/targets?filters%5Btags%5D=staging')).map((t) => t.target)).to.deep.equal(['b.example.com']);
      // Scans, sources and scheduled scans go through the same rewrite: their own keys are read, and unknown ones named.
      expect(await raw('/v1/scans?filters[state][]=RUNNING&filters[type][0]=NMAP')).to.deep.equal([]);
      expect(await raw('/v1/sources?filters[source_type][]=IMPORTED')).to.be.an('array');
      const scheduled = await service.get('/v1/scans/scheduled?filters[state][]=QUEUED');
      expect(scheduled.status).to.equal(400);
      expect(scheduled.body.error).to.match(/takes no filters/);
    });

    const invalid: Array<[string, string, RegExp]> = [
      ['invalid JSON', '{tags:', /not valid JSON/],
      ['a JSON array', '["prod"]', /JSON object/],
      ['an unknown key, naming the allowed keys', '{"colour":["red"]}', /'colour'.*allowed keys: tags, label, target/],
      ['a value that is not an array', '{"tags":"prod"}', /filters\.tags must be an array/],
      ['an array of numbers', '{"tags":[1]}', /filters\.tags must be an array of strings/],
    ];
    for (const [what, filters, message] of invalid) {
      it(`refuses ${what} with 400`, async () => {
        const response = await service.get('/v1/targets', { query: { filters } });
        expect(response.status).to.equal(400);
        expect(response.body.error).to.match(message);
      });
    }
  });

  describe('sort', () => {
    beforeEach(async () => {
      await create('b.example.com', { label: 'Zulu' });
      await create('c.example.com', { label: 'Alpha' });
      await create('a.example.com', { label: 'Mike' });
    });

    async function order(sort: string, query: Record<string, string | number> = {}): Promise<string[]> {
      const { ids } = await allPages({ sort, ...query });
      const byId = new Map<string, string>();
      for (const target of (await service.get('/v1/targets')).body.data) byId.set(target.id, target.target);
      return ids.map((id) => byId.get(id)!);
    }

    it('sorts by label ascending and descending, across pages', async () => {
      expect(await order('label asc', { page_size: 1 })).to.deep.equal(['c.example.com', 'a.example.com', 'b.example.com']);
      expect(await order('label desc', { page_size: 2 })).to.deep.equal(['b.example.com', 'a.example.com', 'c.example.com']);
    });

    it('sorts by target, defaulting to ascending', async () => {
      expect(await order('target')).to.deep.equal(['a.example.com', 'b.example.com', 'c.example.com']);
    });

    it('sorts by created_at both ways', async () => {
      expect(await order('created_at asc', { page_size: 2 })).to.deep.equal(['b.example.com', 'c.example.com', 'a.example.com']);
      expect(await order('created_at desc')).to.deep.equal(['a.example.com', 'c.example.com', 'b.example.com']);
    });

    it('sorts by last_scanned with never-scanned targets as earliest, then by a second field', async () => {
      const repository = new SqliteTargetRepository(service.vigil.db);
      const listed = (await service.get('/v1/targets')).body.data as Array<{ id: string; target: string }>;
      const byAddress = new Map(listed.map((t) => [t.target, t.id]));
      for (const [address, at] of [
        ['b.example.com', '2026-01-02T00:00:00.000Z'],
        ['c.example.com', '2026-03-01T00:00:00.000Z'],
      ] as const) {
        const target = repository.findById(service.accountId, byAddress.get(address)!)!;
        repository.update({ ...target, lastScannedAt: at });
      }
      expect(await order('last_scanned desc,label asc', { page_size: 1 })).to.deep.equal(['c.example.com', 'b.example.com', 'a.example.com']);
      expect(await order('last_scanned asc')).to.deep.equal(['a.example.com', 'b.example.com', 'c.example.com']);
    });

    it('refuses an unknown sort field with 400 naming the allowed fields', async () => {
      const response = await service.get('/v1/targets', { query: { sort: 'health desc' } });
      expect(response.status).to.equal(400);
      expect(response.body.error).to.match(/'health'.*label, target, created_at, last_scanned/);
    });

    it('refuses a direction other than asc or desc with 400', async () => {
      expect((await service.get('/v1/targets', { query: { sort: 'label upward' } })).status).to.equal(400);
    });
  });

  it("never lists another account's targets", async () => {
    await create('mine.example.com');
    const other = service.createAccount('other');
    await service.post('/v1/targets', { target: 'theirs.example.com' }, { key: other.apiKey });
    const mine = (await service.get('/v1/targets')).body.data.map((t: { target: string }) => t.target);
    expect(mine).to.deep.equal(['mine.example.com']);
  });
});
