/**
 * The README, run as written: every `sh` block, in order, in one bash
 * session, from a fresh directory that looks like a clone (dist, scripts and
 * node_modules linked in) with no VIGIL_ variable set. `make run`,
 * `make mail-sink` and `make webhook-receiver` are the only commands given a
 * stand-in: a shell function that starts what the make target starts, in the
 * background (stopping the one before, as Ctrl-C would), and waits until it
 * answers. Placeholders a person copies from the screen (the first key, a
 * signing secret) are filled from what Vigil printed, and curl fails on an
 * HTTP error unless the block prints the status itself (-w). Then the claims
 * the prose makes about what appears in the other terminals are checked.
 */
import { expect } from 'chai';
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fillPlaceholders, readmeBlocks, type ReadmeBlock } from '../support/readme-blocks.js';
import { tempDir } from '../support/temp-dir.js';
import { waitFor } from '../support/wait.js';
import { ROOT } from '../support/vigil-process.js';
import { MAIL_SINK_DEFAULT_PORT, WEBHOOK_RECEIVER_DEFAULT_PORT } from '../../scripts/sink-ports.js';

const BLOCK_TIME_LIMIT_MS = 120_000;
const DONE = '__readme_block_done__';
const LINKED = ['dist', 'node_modules', 'scripts', 'src', 'test', 'package.json', 'tsconfig.json'];

/** Fields the README prints that are null by design: a schedule that has not run, or will not run again. */
const NULL_BY_DESIGN = new Set(['last_ran', 'next_run']);

/** The TCP ports an NMAP scan probes (`--top-ports 1000`), from nmap's own list. */
function nmapTopPorts(): Set<number> {
  const xml = execFileSync('nmap', ['-sT', '-Pn', '-n', '--top-ports', '1000', '-oX', '-', '127.0.0.1'], { encoding: 'utf8' });
  const services = /<scaninfo [^>]*services="([^"]+)"/.exec(xml)![1]!;
  const ports = new Set<number>();
  for (const range of services.split(',')) {
    const [from, to] = range.split('-').map(Number) as [number, number | undefined];
    for (let port = from; port <= (to ?? from); port++) ports.add(port);
  }
  return ports;
}

/** The stand-ins for the make targets the walk uses, and the helpers they need. */
const PRELUDE = String.raw`
set -eo pipefail
__state="$README_TEST_STATE"
__stop() {
  local pidfile="$__state/$1.pid"
  [ -f "$pidfile" ] || return 0
  local pid; pid=$(cat "$pidfile"); rm -f "$pidfile"
  kill -TERM -- "-$pid" 2>/dev/null || return 0
  for _ in $(seq 100); do kill -0 -- "-$pid" 2>/dev/null || return 0; sleep 0.1; done
  kill -KILL -- "-$pid" 2>/dev/null || true
}
__start() {
  local name=$1; shift
  __stop "$name"
  setsid "$@" >"$__state/$name.log" 2>&1 &
  echo $! >"$__state/$name.pid"
}
__wait_for_line() {
  for _ in $(seq 600); do grep -q -- "$2" "$__state/$1.log" 2>/dev/null && return 0; sleep 0.1; done
  echo "readme test: $1 never printed '$2':" >&2; tail -n 20 "$__state/$1.log" >&2; return 1
}
# An HTTP error fails the block, as a person reading the answer would notice it; a command that prints
# the status itself (-w) shows an expected refusal.
curl() {
  case " $* " in
    *" -w "*) command curl "$@" ;;
    *) command curl --fail-with-body "$@" ;;
  esac
}
make() {
  case "$*" in
    run)
      __start vigil node dist/src/cli/main.js serve
      __wait_for_line vigil '"msg":"vigil listening"'
      if [ -z "$FIRST_API_KEY" ]; then __wait_for_line vigil 'vgl_'; FIRST_API_KEY=$(grep -o 'vgl_[A-Za-z0-9_-]*' "$__state/vigil.log" | head -n 1); cp "$__state/vigil.log" "$__state/vigil-first-start.log"; fi ;;
    mail-sink) __start mail-sink npx tsx scripts/mail-sink.ts; __wait_for_line mail-sink 'mail sink listening' ;;
    webhook-receiver) __start webhook-receiver npx tsx scripts/webhook-receiver.ts; __wait_for_line webhook-receiver 'webhook receiver listening' ;;
    *) echo "readme test: 'make $*' has no stand-in; the walk may use make run, mail-sink and webhook-receiver" >&2; return 1 ;;
  esac
}
`;

/** One bash session that runs blocks one after another and keeps its variables, functions and background jobs. */
class Session {
  private output = '';
  private readonly child: ChildProcess;
  private exited = false;

  constructor(
    cwd: string,
    private readonly state: string,
  ) {
    const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('VIGIL_')));
    this.child = spawn('bash', ['--noprofile', '--norc'], { cwd, env: { ...env, README_TEST_STATE: state }, detached: true, stdio: ['pipe', 'pipe', 'pipe'] });
    this.child.stdout!.on('data', (chunk) => (this.output += chunk));
    this.child.stderr!.on('data', (chunk) => (this.output += chunk));
    this.child.once('exit', () => (this.exited = true));
    writeFileSync(join(state, 'prelude.sh'), PRELUDE);
    this.child.stdin!.write(`source ${JSON.stringify(join(state, 'prelude.sh'))}\n`);
  }

  /** Runs one block; resolves with what it printed, rejects with the output when it fails or outlives its time. */
  async run(block: ReadmeBlock, index: number, code: string): Promise<string> {
    const file = join(this.state, `block-${index}.sh`);
    writeFileSync(file, `${code}\n`);
    const from = this.output.length;
    this.child.stdin!.write(`source ${JSON.stringify(file)}\necho ${DONE}\n`);
    const deadline = Date.now() + BLOCK_TIME_LIMIT_MS;
    while (!this.output.slice(from).includes(DONE)) {
      if (this.exited || Date.now() > deadline) {
        const why = this.exited ? 'failed (the shell stopped on a failing command)' : `ran longer than ${BLOCK_TIME_LIMIT_MS / 1000} s`;
        throw new Error(`README block at line ${block.line} ${why}:\n${code}\n--- output ---\n${this.output.slice(from).slice(-4000)}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    return this.output.slice(from, this.output.indexOf(DONE, from));
  }

  /** Stops what the walk started: the make stand-ins' process groups, then the session's own (background jobs included). */
  close(): void {
    for (const file of readdirSync(this.state).filter((name) => name.endsWith('.pid'))) {
      try {
        process.kill(-Number(readFileSync(join(this.state, file), 'utf8')), 'SIGTERM');
      } catch {
        // already gone
      }
    }
    try {
      process.kill(-this.child.pid!, 'SIGKILL');
    } catch {
      // already gone
    }
  }
}

describe('the README, run as written', function () {
  this.timeout(15 * 60_000);
  let sandbox: ReturnType<typeof tempDir>;
  let state: ReturnType<typeof tempDir>;
  let session: Session | undefined;
  const log = (name: string) => (existsSync(join(state.path, `${name}.log`)) ? readFileSync(join(state.path, `${name}.log`), 'utf8') : '');

  before(function () {
    if (!existsSync(join(ROOT, 'dist/src/cli/main.js')))
      throw new Error('dist/ is missing: the README runs the built service, so run `make build` (make test does) first');
    sandbox = tempDir();
    state = tempDir();
    for (const name of LINKED) symlinkSync(join(ROOT, name), join(sandbox.path, name));
  });
  after(() => {
    session?.close();
    if (process.env.README_TEST_KEEP !== undefined) return;
    sandbox.remove();
    state.remove();
  });

  it('lists its blocks, and skips only those that say why', () => {
    const blocks = readmeBlocks(readFileSync(join(ROOT, 'README.md'), 'utf8'));
    expect(blocks.filter((block) => block.skip === undefined).length).to.be.greaterThan(10);
    for (const block of blocks) expect(block.skip ?? 'runs', `README line ${block.line}`).to.match(/\S/);
  });

  it('names the variable that moves each port it uses, and its sinks listen outside the ports an NMAP scan probes', () => {
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
    for (const name of ['VIGIL_PORT', 'MAIL_SINK_PORT', 'WEBHOOK_RECEIVER_PORT']) expect(readme).to.include(`\`${name}\``);
    const top = nmapTopPorts();
    expect(top.size).to.equal(1000);
    expect(top.has(8081), 'the web server step 4 starts is there to be found').to.equal(true);
    expect([MAIL_SINK_DEFAULT_PORT, WEBHOOK_RECEIVER_DEFAULT_PORT].filter((port) => top.has(port))).to.deep.equal([]);
    for (const page of ['README.md', 'docs/configuration.md']) {
      const smtpUrls = [...readFileSync(join(ROOT, page), 'utf8').matchAll(/smtp:\/\/127\.0\.0\.1:(\d+)/g)].map((match) => Number(match[1]));
      expect(smtpUrls, `${page} shows VIGIL_SMTP_URL`).not.to.deep.equal([]);
      expect(smtpUrls, `${page} sends e-mail to the mail sink's port`).to.deep.equal(smtpUrls.map(() => MAIL_SINK_DEFAULT_PORT));
    }
    expect(readme).to.include(`https://127.0.0.1:${WEBHOOK_RECEIVER_DEFAULT_PORT}/hooks`);
  });

  it('runs every block in order, prints what it shows, and what the prose says appears in the other terminals does', async () => {
    const blocks = readmeBlocks(readFileSync(join(ROOT, 'README.md'), 'utf8'));
    session = new Session(sandbox.path, state.path);
    let signingSecret: string | undefined;
    const outputs: Array<{ code: string; printed: string }> = [];
    for (const [index, block] of blocks.entries()) {
      if (block.skip !== undefined) continue;
      const printed = await session.run(block, index, fillPlaceholders(block.code, { signingSecret }));
      outputs.push({ code: block.code, printed });
      signingSecret = /"signing_secret":"(whsec_[^"]+)"/.exec(printed)?.[1] ?? signingSecret;
    }

    const nulls = outputs
      .flatMap(({ printed }) => [...printed.matchAll(/"(\w+)": null/g)].map((match) => match[1]!))
      .filter((field) => !NULL_BY_DESIGN.has(field));
    expect(nulls, 'fields the README prints that came out null').to.deep.equal([]);
    const risks = outputs.find(({ code }) => code.includes('/v1/risks |'))!.printed;
    expect(risks, 'step 4 prints the risks found, with their titles and threat levels').to.match(
      /"title": "[^"]*8081[^"]*",\s*"threat_level": "INFO",\s*"status": "OPEN"/,
    );

    expect(log('vigil-first-start'), 'the first start printed the framed key').to.match(/│\s+vgl_\S+\s+│/);
    expect(log('vigil'), 'a restart keeps the account and its key: no new key is printed').not.to.include('vgl_');

    const mail = log('mail-sink');
    // "no new or closed risks" on a machine where nothing else opens a port between steps 4 and 6; the ports the walk opened never count.
    expect(mail, "the mail sink received the ONCE run's summary, as step 6 says").to.match(
      /to you@example\.com\nSubject: \[Vigil\] Lab check: (no new or closed risks|\d+ new risks?, \d+ closed)\n/,
    );
    expect(mail, 'step 4 found the ports the walk opened already').not.to.match(/Open port (8080|8081)\/tcp/);
    expect(mail).to.match(/New risks: +\d+ critical, \d+ high, \d+ medium, \d+ low, \d+ info\nClosed risks: \d+ critical/);
    expect(mail).to.match(/Scans:\n {2}NMAP SUCCEEDED \(/);
    expect(mail).to.include('Review the risks in the dashboard: http://127.0.0.1:8080/dashboard/risks');

    // Deliveries follow the events by a moment: the last one may still be on its way when the scan reads SUCCEEDED.
    const webhooks = await waitFor(
      async () => log('webhook-receiver'),
      (text) => /scan\.updated event .* SUCCEEDED signature verified/.test(text) && text.includes('risk.updated event'),
      'the SUCCEEDED and risk.updated events at the receiver',
      30_000,
    );
    expect(webhooks, 'the receiver got the scan events').to.match(/scan\.created event .* QUEUED signature verified/);
    expect(webhooks).to.match(/scan\.updated event .* RUNNING signature verified/);
    expect(webhooks, 'and risk.updated for the risks found again').to.match(/risk\.updated event .* OPEN signature verified/);
    expect(webhooks).not.to.include('DOES NOT VERIFY');
    expect(webhooks, "the scan never probed the receiver's port").not.to.include('ignored: not a webhook delivery');

    const left = readdirSync(sandbox.path).filter((name) => !LINKED.includes(name));
    expect(left, 'the walk leaves nothing in the repository root but data/').to.deep.equal(['data']);
  });
});
