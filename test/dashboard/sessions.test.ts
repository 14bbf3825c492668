/**
 * Dashboard sessions over HTTP against the real service: signing in and out,
 * the cookie's flags, what the store keeps, throttled wrong keys, revoked
 * keys ending sessions, CSRF and Origin checks on every form, and the
 * security headers of every kind of response.
 */
import { expect } from 'chai';
import { createHash } from 'node:crypto';
import { Writable } from 'node:stream';
import { createLogger } from '../../src/observability/logger.js';
import { DashboardClient } from '../support/dashboard-client.js';
import { TestService } from '../support/test-service.js';

const CSP = "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

let service: TestService;
before(async () => {
  service = await TestService.start();
});
after(async () => {
  await service.stop();
});

const client = () => new DashboardClient(service.baseUrl);
const keysOf = (accountId: string) => service.vigil.accounts.listApiKeys(accountId);
const sessionRows = () =>
  service.vigil.db.prepare('SELECT * FROM dashboard_sessions').all() as Array<{
    token_hash: Buffer;
    api_key_id: string;
    csrf_token: string;
    expires_at: string;
    created_at: string;
  }>;

describe('dashboard: signing in and out', () => {
  it('sends a signed-out visitor of any page to the sign-in page', async () => {
    const visitor = client();
    for (const path of ['/dashboard', '/dashboard/', '/dashboard/risks', '/dashboard/keys', '/dashboard/webhooks/any-id', '/dashboard/no-such-page']) {
      const response = await visitor.get(path);
      expect(response.status, path).to.equal(303);
      expect(response.location, path).to.equal('/dashboard/sign-in');
    }
    const before = keysOf(service.accountId).length;
    const post = await visitor.post('/dashboard/keys', { name: 'sneaky' }, { csrf: null });
    expect(post.status).to.equal(303);
    expect(post.location).to.equal('/dashboard/sign-in');
    expect(keysOf(service.accountId)).to.have.length(before);
  });

  it('signs in with a valid key: an HttpOnly, SameSite=Strict cookie for /dashboard, and only its hash in the store', async () => {
    const user = client();
    const response = await user.signIn(service.apiKey);
    expect(response.status).to.equal(303);
    expect(response.location).to.equal('/dashboard');
    const cookie = response.setCookies.find((line) => line.startsWith('vigil_session='))!;
    const attributes = cookie.split(';').map((part) => part.trim().toLowerCase());
    expect(attributes).to.include.members(['httponly', 'samesite=strict', 'path=/dashboard', 'max-age=43200']);
    expect(attributes).to.not.include('secure'); // VIGIL_PUBLIC_URL is http:// here
    const token = user.cookies.get('vigil_session')!;
    const stored = sessionRows().find((row) => row.token_hash.equals(createHash('sha256').update(token).digest()));
    expect(stored, 'a session row keyed by the hash of the token').to.not.equal(undefined);
    expect(JSON.stringify(sessionRows())).to.not.include(token);
    expect(Date.parse(stored!.expires_at) - Date.parse(stored!.created_at)).to.equal(12 * 3600 * 1000);
    const page = await user.get('/dashboard/keys');
    expect(page.status).to.equal(200);
    expect(page.text).to.include('test-account');
  });

  it('marks the cookie Secure when VIGIL_PUBLIC_URL is https', async () => {
    const secure = await TestService.start({ env: { VIGIL_PUBLIC_URL: 'https://vigil.example.com' } });
    try {
      const user = new DashboardClient(secure.baseUrl);
      const response = await user.signIn(secure.apiKey);
      expect(response.status).to.equal(303);
      const cookie = response.setCookies.find((line) => line.startsWith('vigil_session='))!;
      expect(cookie.split(';').map((part) => part.trim())).to.include('Secure');
    } finally {
      await secure.stop();
    }
  });

  it('refuses a wrong key with 401 and a clear message, starts no session, and never logs or echoes the key', async () => {
    const user = client();
    const wrong = 'vgl_this-is-not-a-real-key-but-looks-like-one-1234';
    const sessions = sessionRows().length;
    const response = await user.signIn(wrong);
    expect(response.status).to.equal(401);
    expect(response.text).to.include('That API key is not valid, or it has been revoked.');
    expect(response.text).to.include('role="alert"');
    expect(response.text).to.not.include(wrong);
    expect(user.cookies.has('vigil_session')).to.equal(false);
    expect(sessionRows()).to.have.length(sessions);
    expect(service.logLines.join('\n')).to.not.include(wrong);
  });

  it('refuses a sign-in without the form token (login CSRF) or from another origin', async () => {
    const user = client();
    const noForm = await user.post('/dashboard/sign-in', { api_key: service.apiKey }, { csrf: null });
    expect(noForm.status).to.equal(403);
    await user.get('/dashboard/sign-in');
    const forged = await user.post('/dashboard/sign-in', { api_key: service.apiKey }, { csrf: 'guessed' });
    expect(forged.status).to.equal(403);
    await user.get('/dashboard/sign-in');
    const foreign = await user.post('/dashboard/sign-in', { api_key: service.apiKey }, { origin: 'https://evil.example' });
    expect(foreign.status).to.equal(403);
    expect(foreign.text).to.include('sent from another site');
    expect(user.cookies.has('vigil_session')).to.equal(false);
  });

  it('throttles failed sign-ins per client address, then refuses even the right key with 429 and Retry-After', async () => {
    const throttled = await TestService.start();
    try {
      const user = new DashboardClient(throttled.baseUrl);
      const statuses: number[] = [];
      for (let attempt = 0; attempt < 10; attempt++) statuses.push((await user.signIn(`vgl_wrong-${attempt}`)).status);
      expect(statuses).to.deep.equal(Array(10).fill(401));
      const blocked = await user.signIn(throttled.apiKey);
      expect(blocked.status).to.equal(429);
      expect(Number(blocked.headers.get('retry-after'))).to.be.greaterThan(0);
      expect(blocked.text).to.include('Too many failed sign-ins');
      expect(user.cookies.has('vigil_session')).to.equal(false);
    } finally {
      await throttled.stop();
    }
  });

  it('signs out: the session row is deleted and the old cookie no longer works', async () => {
    const user = await client().signedIn(service.apiKey);
    const token = user.cookies.get('vigil_session')!;
    const response = await user.post('/dashboard/sign-out');
    expect(response.status).to.equal(303);
    expect(response.location).to.equal('/dashboard/sign-in?notice=signed-out');
    expect(user.cookies.has('vigil_session')).to.equal(false);
    expect(sessionRows().some((row) => row.token_hash.equals(createHash('sha256').update(token).digest()))).to.equal(false);
    const replay = new DashboardClient(service.baseUrl);
    replay.cookies.set('vigil_session', token);
    expect((await replay.get('/dashboard/keys')).location).to.equal('/dashboard/sign-in');
    expect((await user.get('/dashboard/sign-in?notice=signed-out')).text).to.include('You are signed out.');
  });

  it('ends a session when the key it was opened with is revoked elsewhere', async () => {
    const { id, apiKey } = service.vigil.accounts.createApiKey(service.accountId, 'short-lived');
    const user = await client().signedIn(apiKey);
    expect((await user.get('/dashboard/risks')).status).to.equal(200);
    service.vigil.accounts.revokeApiKey(service.accountId, id);
    const after = await user.get('/dashboard/risks');
    expect(after.status).to.equal(303);
    expect(after.location).to.equal('/dashboard/sign-in');
    expect((await client().signIn(apiKey)).status).to.equal(401);
  });

  it('signs out when the session revokes its own key in the dashboard', async () => {
    const { id, apiKey } = service.vigil.accounts.createApiKey(service.accountId, 'revoke-myself');
    const user = await client().signedIn(apiKey);
    const response = await user.post(`/dashboard/keys/${id}/revoke`);
    expect(response.status).to.equal(303);
    expect(response.location).to.equal('/dashboard/sign-in?notice=own-key-revoked');
    expect(user.cookies.has('vigil_session')).to.equal(false);
    expect(keysOf(service.accountId).find((key) => key.id === id)!.revokedAt).to.be.a('string');
    expect((await service.get('/v1/risks', { key: apiKey })).status).to.equal(401);
  });
});

describe('dashboard: forms are CSRF-safe', () => {
  it("refuses a POST without the CSRF token, with a wrong one, or with another session's, and changes nothing", async () => {
    const user = await client().signedIn(service.apiKey);
    const other = await client().signedIn(service.apiKey);
    const before = keysOf(service.accountId).length;
    for (const csrf of [null, '', 'x'.repeat(43), other.csrf!]) {
      const response = await user.post('/dashboard/keys', { name: 'csrf victim' }, { csrf });
      expect(response.status, `csrf ${csrf}`).to.equal(403);
      expect(response.text).to.include('Reload the page and try again');
    }
    expect(keysOf(service.accountId)).to.have.length(before);
    const accepted = await user.post('/dashboard/keys', { name: 'with the token' });
    expect(accepted.status).to.equal(200);
    expect(keysOf(service.accountId)).to.have.length(before + 1);
  });

  it('refuses a POST from a foreign Origin even with the right token', async () => {
    const user = await client().signedIn(service.apiKey);
    const before = keysOf(service.accountId).length;
    for (const origin of ['https://evil.example', 'null', `${service.baseUrl}.evil.example`]) {
      const response = await user.post('/dashboard/keys', { name: 'cross-site' }, { origin });
      expect(response.status, origin).to.equal(403);
    }
    expect(keysOf(service.accountId)).to.have.length(before);
    // No Origin at all (an old browser) still needs the token, which is there.
    expect((await user.post('/dashboard/keys', { name: 'no origin header' }, { origin: null })).status).to.equal(200);
  });

  it('decides by Sec-Fetch-Site when the Origin is absent or null (as browsers send it from no-referrer pages)', async () => {
    const user = await client().signedIn(service.apiKey);
    const post = (headers: Record<string, string>) =>
      fetch(`${service.baseUrl}/dashboard/keys`, {
        method: 'POST',
        redirect: 'manual',
        headers: { 'Content-Type': 'application/x-www-form-urlencoded', Cookie: `vigil_session=${user.cookies.get('vigil_session')}`, ...headers },
        body: new URLSearchParams({ name: 'fetch metadata', csrf: user.csrf! }).toString(),
      });
    expect((await post({ 'Sec-Fetch-Site': 'cross-site' })).status).to.equal(403);
    expect((await post({ Origin: 'null', 'Sec-Fetch-Site': 'cross-site' })).status).to.equal(403);
    expect((await post({ Origin: 'null', 'Sec-Fetch-Site': 'same-site' })).status).to.equal(403);
    expect((await post({ Origin: 'null' })).status).to.equal(403);
    expect((await post({ Origin: 'null', 'Sec-Fetch-Site': 'same-origin' })).status).to.equal(200);
  });
});

describe('dashboard: security headers', () => {
  it('sends a strict CSP, nosniff, no-referrer and no-store on pages, redirects and errors alike', async () => {
    const user = await client().signedIn(service.apiKey);
    const responses = [
      await client().get('/dashboard/sign-in'),
      await client().get('/dashboard/risks'),
      await user.get('/dashboard/risks'),
      await user.get('/dashboard/keys'),
      await user.get('/dashboard/webhooks'),
      await user.get('/dashboard/risks/not-a-risk'),
      await user.get('/dashboard/no-such-page'),
      await user.post('/dashboard/keys', {}, { csrf: 'wrong' }),
    ];
    expect(responses.map((response) => response.status)).to.deep.equal([200, 303, 200, 200, 200, 404, 404, 403]);
    for (const response of responses) {
      expect(response.headers.get('content-security-policy')).to.equal(CSP);
      expect(response.headers.get('x-content-type-options')).to.equal('nosniff');
      expect(response.headers.get('referrer-policy')).to.equal('no-referrer');
      expect(response.headers.get('cache-control')).to.equal('no-store');
    }
    for (const response of responses.filter((one) => one.status !== 303)) {
      expect(response.headers.get('content-type')).to.match(/^text\/html/);
      expect(response.text).to.match(/^<!doctype html>\n<html lang="en">/);
      expect(response.text).to.not.match(/<script|style="|\son\w+=/i);
    }
  });

  it('serves its stylesheet and icon from /dashboard/assets, so the CSP needs nothing else', async () => {
    const page = (await client().get('/dashboard/sign-in')).text;
    const stylesheet = /<link rel="stylesheet" href="(\/dashboard\/assets\/[^"]+\.css)">/.exec(page)![1]!;
    const icon = /<link rel="icon" href="(\/dashboard\/assets\/[^"]+\.svg)"/.exec(page)![1]!;
    const css = await client().get(stylesheet);
    expect(css.status).to.equal(200);
    expect(css.headers.get('content-type')).to.match(/^text\/css/);
    expect(css.text).to.include(':focus-visible');
    expect((await client().get(icon)).headers.get('content-type')).to.match(/^image\/svg\+xml/);
    expect(page).to.not.match(/https?:\/\//);
  });

  it('redacts cookie headers, should a request or response ever be logged whole', () => {
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk, _encoding, done) {
        lines.push(String(chunk));
        done();
      },
    });
    const logger = createLogger('info', sink);
    logger.info(
      { req: { headers: { cookie: 'vigil_session=secret-token' } }, res: { headers: { 'set-cookie': ['vigil_session=secret-token; HttpOnly'] } } },
      'request',
    );
    logger.info({ headers: { cookie: 'vigil_sign_in=form-token', 'set-cookie': 'vigil_sign_in=form-token' } }, 'headers');
    expect(lines.join('')).to.not.match(/secret-token|form-token/);
    expect(lines.join('').match(/\[redacted\]/g)).to.have.length(4);
  });

  it('never logs keys, session tokens, CSRF tokens or cookies', async () => {
    const user = await client().signedIn(service.apiKey);
    await user.post('/dashboard/keys', { name: 'logged?' });
    const created = /id="new-api-key" readonly value="([^"]+)"/.exec((await user.post('/dashboard/keys', { name: 'logged too?' })).text)![1]!;
    const logs = service.logLines.join('\n');
    for (const secret of [service.apiKey, created, user.cookies.get('vigil_session')!, user.csrf!]) expect(logs).to.not.include(secret);
    expect(logs).to.include('dashboard sign-in');
  });
});
