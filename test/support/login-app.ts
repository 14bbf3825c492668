/**
 * A small web application for login replays: its login form only exists
 * after its JavaScript runs (a delayed render, as single-page apps do). A
 * correct login sets a session cookie and the page then calls /api/me with
 * an Authorization header, as token-based front ends do. /away sends the
 * browser to the cloud metadata address, which the replay must refuse.
 */
import { createServer, type Server } from 'node:http';

export const DEMO_USER = 'alice';
export const DEMO_PASSWORD = 'correct horse';
export const DEMO_SESSION = 'session-7f3a9c';
export const DEMO_TOKEN = 'Bearer token-5d1e2b';

const PAGE = `<!doctype html><html><head><title>Demo shop</title><script src="/app.js"></script></head><body><div id="root">Loading…</div></body></html>`;

const APP_JS = `
window.addEventListener('load', () => setTimeout(() => {
  const root = document.getElementById('root');
  root.innerHTML = '<form id="login"><input id="username" name="username"><input name="password" type="password"><button id="submit">Sign in</button><p class="error"></p></form>';
  document.getElementById('login').addEventListener('submit', async (event) => {
    event.preventDefault();
    const form = new FormData(event.target);
    const answer = await fetch('/api/login', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ user: form.get('username'), password: form.get('password') }) });
    if (!answer.ok) { root.querySelector('.error').textContent = 'Wrong user name or password'; return; }
    const me = await (await fetch('/api/me', { headers: { authorization: ${JSON.stringify(DEMO_TOKEN)} } })).json();
    root.innerHTML = '<p class="welcome">Welcome, ' + me.user + '</p>';
  });
}, 300));
`;

export class LoginApp {
  private constructor(
    private readonly server: Server,
    readonly port: number,
    /** Every request the app answered, as 'METHOD /path', followed by ' with session' when it carried the login's cookie and Authorization header. */
    readonly requests: string[],
  ) {}

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  static async start(): Promise<LoginApp> {
    const requests: string[] = [];
    const server = createServer((req, res) => {
      const withSession = req.headers.authorization === DEMO_TOKEN && (req.headers.cookie ?? '').includes(`sid=${DEMO_SESSION}`);
      requests.push(`${req.method} ${req.url}${withSession ? ' with session' : ''}`);
      const send = (status: number, type: string, body: string, headers: Record<string, string> = {}) =>
        res.writeHead(status, { 'content-type': type, ...headers }).end(body);
      if (req.url === '/login' || req.url === '/') return send(200, 'text/html', PAGE);
      if (req.url === '/app.js') return send(200, 'text/javascript', APP_JS);
      if (req.url === '/away')
        return send(200, 'text/html', '<!doctype html><title>away</title><script>location.href = "http://169.254.169.254/latest/meta-data/";</script>');
      if (req.url === '/api/login' && req.method === 'POST') {
        let body = '';
        req.on('data', (chunk: Buffer) => (body += chunk.toString()));
        req.on('end', () => {
          const { user, password } = JSON.parse(body) as { user: string; password: string };
          if (user === DEMO_USER && password === DEMO_PASSWORD) send(200, 'application/json', '{}', { 'set-cookie': `sid=${DEMO_SESSION}; Path=/; HttpOnly` });
          else send(401, 'application/json', '{"error":"wrong"}');
        });
        return undefined;
      }
      if (req.url === '/api/me') {
        const ok = req.headers.authorization === DEMO_TOKEN && (req.headers.cookie ?? '').includes(`sid=${DEMO_SESSION}`);
        return ok ? send(200, 'application/json', JSON.stringify({ user: DEMO_USER })) : send(401, 'application/json', '{}');
      }
      return send(404, 'text/plain', 'not found');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
    return new LoginApp(server, (server.address() as { port: number }).port, requests);
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
