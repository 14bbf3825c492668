/**
 * `vigil login-replay`, the Kubernetes Job's login step, run as the Job runs
 * it (the CLI in its own process, inputs in a directory, the real browser):
 * it writes ZAP's plan with the session and removes the inputs it used from
 * the output directory; a failed login exits 3 with the sentence in the
 * termination log, and prints neither the password nor the session.
 */
import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { DEMO_SESSION, DEMO_TOKEN, LoginApp } from '../support/login-app.js';
import { tempDir } from '../support/temp-dir.js';

const ROOT = new URL('../../', import.meta.url).pathname;

function run(args: string[], env: Record<string, string>): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', 'login-replay', ...args], { cwd: ROOT, env: { ...process.env, ...env } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += String(chunk)));
    child.stderr.on('data', (chunk) => (stderr += String(chunk)));
    child.on('close', (status) => resolve({ status, stdout, stderr }));
  });
}

describe('vigil login-replay (the login step of scan Jobs)', function () {
  this.timeout(120_000);
  let app: LoginApp;
  let dir: ReturnType<typeof tempDir>;
  before(async () => {
    app = await LoginApp.start();
  });
  after(async () => app.stop());
  beforeEach(() => {
    dir = tempDir();
  });
  afterEach(() => dir.remove());

  function inputs(password = 'correct horse') {
    const input = join(dir.path, 'input');
    const output = join(dir.path, 'output');
    mkdirSync(input);
    mkdirSync(output);
    const project = JSON.parse(readFileSync(new URL('../fixtures/selenium/demo-login.side', import.meta.url), 'utf8'));
    project.url = app.url;
    project.tests[0].commands[4].value = password;
    writeFileSync(join(input, 'login.side'), JSON.stringify(project));
    writeFileSync(
      join(input, 'zap-plan-input.json'),
      JSON.stringify({ targetUrl: `${app.url}/`, active: false, reportDir: output, reportFile: 'zap-report.json', settings: {} }),
    );
    // prepare-inputs has copied every input next to the outputs.
    for (const name of ['login.side', 'zap-plan-input.json']) copyFileSync(join(input, name), join(output, name));
    const args = [
      '--recording',
      join(input, 'login.side'),
      '--plan-input',
      join(input, 'zap-plan-input.json'),
      '--plan',
      join(output, 'zap-plan.yaml'),
      '--termination-log',
      join(dir.path, 'termination-log'),
    ];
    return { args, output };
  }

  it('writes the plan with the session and removes the inputs from the output directory', async () => {
    const { args, output } = inputs();
    const result = await run(args, { VIGIL_ALLOW_TARGETS: '127.0.0.1/32' });
    expect(result.status, result.stderr).to.equal(0);
    expect(result.stdout).to.equal("login replayed: ZAP's plan carries 1 cookie(s) and an Authorization header\n");
    const rules = parse(readFileSync(join(output, 'zap-plan.yaml'), 'utf8')).jobs.find((job: { type: string }) => job.type === 'replacer').rules;
    expect(rules.map((rule: { matchString: string; replacementString: string }) => [rule.matchString, rule.replacementString])).to.deep.equal([
      ['Authorization', DEMO_TOKEN],
      ['Cookie', `sid=${DEMO_SESSION}`],
    ]);
    expect(existsSync(join(output, 'login.side'))).to.equal(false);
    expect(existsSync(join(output, 'zap-plan-input.json'))).to.equal(false);
    expect(result.stdout + result.stderr).to.not.include(DEMO_SESSION);
  });

  it('exits 3 with the failing command in the termination log, printing no password', async () => {
    const { args, output } = inputs('hunter2-wrong');
    const result = await run(args, { VIGIL_ALLOW_TARGETS: '127.0.0.1/32' });
    expect(result.status).to.equal(3);
    const message = readFileSync(join(dir.path, 'termination-log'), 'utf8');
    expect(message).to.match(/^command 7 of test 'log in as alice', waitForElementVisible 'css=\.welcome' failed:/);
    expect(result.stderr).to.include(message);
    expect(result.stdout + result.stderr + message).to.not.include('hunter2-wrong');
    expect(existsSync(join(output, 'zap-plan.yaml'))).to.equal(false);
  });
});
