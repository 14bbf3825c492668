/**
 * Login replay in the real browser (system Chromium through playwright-core)
 * against a local application whose form only exists after its JavaScript
 * runs, confined by Vigil's proxy: the recording fixture logs in, and
 * recordings that use a wrong password, a missing element, an unsupported
 * command or a page that sends the browser to a private address fail with a
 * message naming the command (and the host).
 */
import { expect } from 'chai';
import { existsSync, readFileSync } from 'node:fs';
import { BrowserLoginReplayer } from '../../src/runtime/login-replay/browser-login.js';
import { parseLoginRecording, type LoginRecording } from '../../src/domain/targets/login-recording.js';
import { parseCidrList } from '../../src/domain/targets/ipv4.js';
import { systemResolver } from '../../src/runtime/dns-resolver.js';
import { DEMO_SESSION, DEMO_TOKEN, LoginApp } from '../support/login-app.js';

const CHROMIUM = '/usr/bin/chromium';
const FIXTURE = new URL('../fixtures/selenium/demo-login.side', import.meta.url);

function recordingFor(app: LoginApp, change: (project: any) => void = () => undefined): LoginRecording {
  const project = JSON.parse(readFileSync(FIXTURE, 'utf8'));
  project.url = app.url;
  change(project);
  return parseLoginRecording('demo-login.side', Buffer.from(JSON.stringify(project)));
}

const commands = (project: any) => project.tests[0].commands as Array<{ command: string; target: string; value: string }>;

describe('login replay in a confined browser', function () {
  this.timeout(120_000);
  let app: LoginApp;
  const replayer = (allow = '127.0.0.1/32') =>
    new BrowserLoginReplayer({
      chromiumPath: CHROMIUM,
      allowTargets: parseCidrList(allow),
      resolver: systemResolver,
      commandTimeoutMs: 3000,
      replayTimeoutMs: 60_000,
    });

  before(async function () {
    if (!existsSync(CHROMIUM)) throw new Error(`Chromium is not installed at ${CHROMIUM}; install it with \`apt-get install chromium\``);
    app = await LoginApp.start();
  });
  after(async () => app.stop());

  it('logs in with the recorded project and hands back the session cookie and Authorization header', async () => {
    const outcome = await replayer().replay(recordingFor(app), `${app.url}/`);
    expect(outcome, JSON.stringify(outcome)).to.have.property('ok', true);
    if (!outcome.ok) return;
    expect(outcome.session.cookies.map((cookie) => `${cookie.name}=${cookie.value}`)).to.deep.equal([`sid=${DEMO_SESSION}`]);
    expect(outcome.session.authorization).to.equal(DEMO_TOKEN);
    expect(app.requests).to.include('POST /api/login');
  });

  it('fails at the assertion when the recorded password is wrong', async () => {
    const outcome = await replayer().replay(
      recordingFor(app, (project) => (commands(project)[4]!.value = 'wrong')),
      `${app.url}/`,
    );
    expect(outcome.ok).to.equal(false);
    expect(!outcome.ok && outcome.message).to.match(/^command 7 of test 'log in as alice', waitForElementVisible 'css=\.welcome' failed: .*3000ms/);
  });

  it('fails naming the command whose element is missing', async () => {
    const outcome = await replayer().replay(
      recordingFor(app, (project) => (commands(project)[2]!.target = 'id=user-name')),
      `${app.url}/`,
    );
    expect(!outcome.ok && outcome.message).to.match(/^command 3 of test 'log in as alice', click 'id=user-name' failed: Timeout 3000ms exceeded/);
  });

  it('fails on a command it does not support, and on one that runs JavaScript', async () => {
    const unsupported = await replayer().replay(
      recordingFor(app, (project) => commands(project).splice(1, 0, { command: 'selectFrame', target: 'index=0', value: '' })),
      `${app.url}/`,
    );
    expect(!unsupported.ok && unsupported.message).to.match(
      /^command 2 of test 'log in as alice', selectFrame 'index=0' failed: the command is not supported; Vigil replays .*sendKeys/,
    );
    const script = await replayer().replay(
      recordingFor(app, (project) => commands(project).splice(1, 0, { command: 'runScript', target: 'document.cookie="x=1"', value: '' })),
      `${app.url}/`,
    );
    expect(!script.ok && script.message).to.match(/command 2 .*runScript .* failed: login recordings may not run JavaScript/);
  });

  it('refuses a page that sends the browser to a private address, naming the host', async () => {
    const outcome = await replayer().replay(
      recordingFor(app, (project) =>
        project.tests[0].commands.splice(
          0,
          9,
          { command: 'open', target: '/away', value: '' },
          { command: 'waitForElementPresent', target: 'css=body', value: '2000' },
          { command: 'assertTitle', target: 'metadata', value: '' },
        ),
      ),
      `${app.url}/`,
    );
    expect(outcome.ok).to.equal(false);
    expect(!outcome.ok && outcome.message, JSON.stringify(outcome)).to.match(
      /the browser was sent to 169\.254\.169\.254, which Vigil refused: it is in the 169\.254\.0\.0\/16 link-local/,
    );
  });

  it('stops a replay that outlasts its time limit, and a pause longer than a command may take', async () => {
    const slow = recordingFor(app, (project) => commands(project).splice(1, 0, ...[1, 2, 3].map(() => ({ command: 'pause', target: '', value: '900' }))));
    const limited = new BrowserLoginReplayer({
      chromiumPath: CHROMIUM,
      allowTargets: parseCidrList('127.0.0.1/32'),
      resolver: systemResolver,
      commandTimeoutMs: 3000,
      replayTimeoutMs: 2000,
    });
    const outcome = await limited.replay(slow, `${app.url}/`);
    expect(!outcome.ok && outcome.message).to.equal('the login replay took longer than 2 s and was stopped');
    const long = await replayer().replay(
      recordingFor(app, (project) => commands(project).splice(1, 0, { command: 'pause', target: '', value: '60000' })),
      `${app.url}/`,
    );
    expect(!long.ok && long.message).to.match(/command 2 .*pause failed: a pause of 60000 ms is longer than the 3000 ms a command may take/);
  });

  it('sends loopback through the proxy too: without an allowed range the application itself is refused', async () => {
    const outcome = await replayer('203.0.113.0/24').replay(recordingFor(app), `${app.url}/`);
    expect(!outcome.ok && outcome.message, JSON.stringify(outcome)).to.match(
      /^command 1 of test 'log in as alice', open '\/login' failed: the browser was sent to 127\.0\.0\.1, which Vigil refused: it is in the 127\.0\.0\.0\/8 loopback/,
    );
  });
});

describe('login replay of a site that is down', function () {
  this.timeout(60_000);
  it('fails at the open command, saying the host could not be reached', async () => {
    const app = await LoginApp.start();
    const url = app.url;
    const project = JSON.parse(readFileSync(FIXTURE, 'utf8'));
    project.url = url;
    await app.stop();
    const recording = parseLoginRecording('demo-login.side', Buffer.from(JSON.stringify(project)));
    const outcome = await new BrowserLoginReplayer({
      chromiumPath: CHROMIUM,
      allowTargets: parseCidrList('127.0.0.1/32'),
      resolver: systemResolver,
      commandTimeoutMs: 3000,
    }).replay(recording, `${url}/`);
    expect(!outcome.ok && outcome.message, JSON.stringify(outcome)).to.match(
      /^command 1 of test 'log in as alice', open '\/login' failed: 127\.0\.0\.1:\d+ could not be reached: connect ECONNREFUSED/,
    );
  });
});
