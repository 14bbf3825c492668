import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import { tempDir } from '../support/temp-dir.js';
import { waitFor } from '../support/wait.js';
import { ROOT, VIGIL_COMMAND, startVigil } from '../support/vigil-process.js';

function vigil(args: string[], env: Record<string, string>, cwd = ROOT) {
  const [node, ...cli] = VIGIL_COMMAND;
  const result = spawnSync(node, [...cli, ...args], { cwd, env: { ...process.env, ...env }, encoding: 'utf8' });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

const serve = (env: Record<string, string>) => startVigil({ env });
const stop = (running: { stop(): Promise<number | null> }) => running.stop();

async function listTargets(port: number, key: string): Promise<number> {
  return (await fetch(`http://127.0.0.1:${port}/v1/targets`, { headers: { 'X-SERVICE-API-KEY': key } })).status;
}

describe('the vigil command', function () {
  this.timeout(60_000);
  let dir: ReturnType<typeof tempDir>;

  beforeEach(() => {
    dir = tempDir();
  });
  afterEach(() => {
    dir.remove();
  });

  describe('vigil accounts create', () => {
    it('prints one JSON line with account_id and api_key', () => {
      const result = vigil(
        ['accounts', 'create', '--name', 'acme', '--plan', 'paid', '--feature', 'nessus', '--feature', 'csv_export', '--monthly-scan-limit', '50'],
        { VIGIL_DATA_DIR: dir.path },
      );
      expect(result.code, result.stderr).to.equal(0);
      const lines = result.stdout.trim().split('\n');
      expect(lines).to.have.length(1);
      const printed = JSON.parse(lines[0]!);
      expect(Object.keys(printed).sort()).to.deep.equal(['account_id', 'api_key']);
      expect(printed.api_key).to.match(/^vgl_[A-Za-z0-9_-]{43}$/);
    });

    const badArguments: Array<[string, string[], RegExp]> = [
      ['a missing --name', ['accounts', 'create'], /required option '--name <name>' not specified/],
      ['an empty --name', ['accounts', 'create', '--name', ' '], /--name must not be empty/],
      ['an unknown plan', ['accounts', 'create', '--name', 'a', '--plan', 'gold'], /'gold' is invalid\. Allowed choices are free, paid/],
      [
        'an unknown feature',
        ['accounts', 'create', '--name', 'a', '--feature', 'nessus', '--feature', 'teleport'],
        /'teleport' is invalid\. Allowed choices are nessus, csv_export/,
      ],
      ['a negative scan limit', ['accounts', 'create', '--name', 'a', '--monthly-scan-limit', '-1'], /--monthly-scan-limit/],
      ['an unknown option', ['accounts', 'create', '--name', 'a', '--colour', 'red'], /colour/],
      ['an invalid namespace', ['accounts', 'create', '--name', 'a', '--namespace', 'Not_Valid'], /namespace/],
      [
        'a namespace longer than a DNS-1123 label',
        ['accounts', 'create', '--name', 'a', '--namespace', 'a'.repeat(64)],
        /not a valid Kubernetes namespace name/,
      ],
      ['the kube-system namespace', ['accounts', 'create', '--name', 'a', '--namespace', 'kube-system'], /'kube-system' is a Kubernetes system namespace/],
      ['the kube-public namespace', ['accounts', 'create', '--name', 'a', '--namespace', 'kube-public'], /'kube-public' is a Kubernetes system namespace/],
      [
        'the kube-node-lease namespace',
        ['accounts', 'create', '--name', 'a', '--namespace', 'kube-node-lease'],
        /'kube-node-lease' is a Kubernetes system namespace/,
      ],
      ['an unknown command', ['launch'], /unknown command 'launch'/],
    ];
    for (const [what, args, message] of badArguments) {
      it(`exits 2 with one sentence on stderr for ${what}`, () => {
        const result = vigil(args, { VIGIL_DATA_DIR: dir.path });
        expect(result.code).to.equal(2);
        expect(result.stderr.trim().split('\n')).to.have.length(1);
        expect(result.stderr).to.match(message);
        expect(result.stdout).to.equal('');
      });
    }

    it('exits 2 for an unknown accounts command, suggesting the one meant', () => {
      const result = vigil(['accounts', 'delete'], { VIGIL_DATA_DIR: dir.path });
      expect(result.code).to.equal(2);
      expect(result.stderr).to.match(/^vigil: unknown command 'delete'/);
      const close = vigil(['accounts', 'creat'], { VIGIL_DATA_DIR: dir.path });
      expect([close.code, close.stderr]).to.deep.equal([2, "vigil: unknown command 'creat'\n(Did you mean create?)\n"]);
    });

    it('exits 2 when the name is taken', () => {
      expect(vigil(['accounts', 'create', '--name', 'acme'], { VIGIL_DATA_DIR: dir.path }).code).to.equal(0);
      const again = vigil(['accounts', 'create', '--name', 'acme'], { VIGIL_DATA_DIR: dir.path });
      expect(again.code).to.equal(2);
      expect(again.stderr).to.match(/already exists/);
    });

    it('exits 2 naming the variable when the environment is invalid', () => {
      const result = vigil(['accounts', 'create', '--name', 'acme'], { VIGIL_DATA_DIR: dir.path, VIGIL_RUNTIME: 'docker' });
      expect(result.code).to.equal(2);
      expect(result.stderr).to.match(/VIGIL_RUNTIME must be one of: embedded, kubernetes/);
    });
  });

  describe('vigil serve', () => {
    it('creates a default account on first start, prints its key once, and stops cleanly on SIGTERM', async () => {
      const first = await serve({ VIGIL_DATA_DIR: dir.path });
      // The banner follows the "vigil listening" line on another stream: wait for it rather than race it.
      await waitFor(
        async () => first.stderr(),
        (text) => text.includes('└'),
        'the first-key banner',
      );
      const key = /^│\s+(vgl_\S+)\s+│$/m.exec(first.stderr())?.[1];
      expect(key, first.stderr()).to.be.a('string');
      // Framed, after the line that says the service listens, with the way to make another key.
      expect(first.stderr()).to.include("Vigil created the account 'default'. Its API key, shown only this once:");
      expect(first.stderr()).to.include('vigil accounts create-key --account default');
      expect(await listTargets(first.port, key!)).to.equal(200);
      expect(await stop(first)).to.equal(0);

      const second = await serve({ VIGIL_DATA_DIR: dir.path });
      expect(second.stderr()).not.to.match(/API key/);
      expect(await listTargets(second.port, key!)).to.equal(200);
      expect(await stop(second)).to.equal(0);
    });

    it('accepts VIGIL_BOOTSTRAP_API_KEY as the default account key, across restarts', async () => {
      const env = { VIGIL_DATA_DIR: dir.path, VIGIL_BOOTSTRAP_API_KEY: 'bootstrap-key-for-tests-0123456789' };
      for (let start = 0; start < 2; start++) {
        const running = await serve(env);
        expect(running.stderr()).not.to.match(/API key/);
        expect(await listTargets(running.port, env.VIGIL_BOOTSTRAP_API_KEY)).to.equal(200);
        expect(await stop(running)).to.equal(0);
      }
    });

    it('serves keys created by `vigil accounts create` while it runs on the same data directory', async () => {
      const running = await serve({ VIGIL_DATA_DIR: dir.path, VIGIL_BOOTSTRAP_API_KEY: 'bootstrap-key-for-tests-0123456789' });
      try {
        const created = vigil(['accounts', 'create', '--name', 'late'], { VIGIL_DATA_DIR: dir.path });
        expect(created.code, created.stderr).to.equal(0);
        expect(await listTargets(running.port, JSON.parse(created.stdout).api_key)).to.equal(200);
      } finally {
        expect(await stop(running)).to.equal(0);
      }
    });

    it('exits 2 naming the variable for a bad port', () => {
      const result = vigil(['serve'], { VIGIL_DATA_DIR: dir.path, VIGIL_PORT: 'http' });
      expect(result.code).to.equal(2);
      expect(result.stderr).to.match(/VIGIL_PORT must be a whole number from 0 to 65535/);
    });
  });
});

describe('vigil accounts list and create-key', function () {
  this.timeout(60_000);
  let dir: ReturnType<typeof tempDir>;
  beforeEach(() => {
    dir = tempDir();
  });
  afterEach(() => dir.remove());

  const create = (args: string[]) => JSON.parse(vigil(['accounts', 'create', ...args], { VIGIL_DATA_DIR: dir.path }).stdout);

  it('lists every account with id, name, plan, features and namespace, as a table and as JSON lines', () => {
    const acme = create(['--name', 'acme', '--plan', 'paid', '--feature', 'csv_export', '--feature', 'nessus']);
    const lab = create(['--name', 'lab', '--namespace', 'security-lab']);
    const table = vigil(['accounts', 'list'], { VIGIL_DATA_DIR: dir.path });
    expect(table.code, table.stderr).to.equal(0);
    const rows = table.stdout
      .trim()
      .split('\n')
      .map((line) => line.split(/\s{3,}/));
    expect(rows).to.deep.equal([
      ['ID', 'NAME', 'PLAN', 'FEATURES', 'NAMESPACE'],
      [acme.account_id, 'acme', 'paid', 'csv_export,nessus', 'vigil-acme'],
      [lab.account_id, 'lab', 'free', '-', 'security-lab'],
    ]);
    const json = vigil(['accounts', 'list', '--json'], { VIGIL_DATA_DIR: dir.path });
    const accounts = json.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(accounts.map((account) => [account.id, account.name, account.plan, account.features, account.namespace])).to.deep.equal([
      [acme.account_id, 'acme', 'paid', ['csv_export', 'nessus'], 'vigil-acme'],
      [lab.account_id, 'lab', 'free', [], 'security-lab'],
    ]);
  });

  it('prints only the header for a data directory without accounts', () => {
    expect(vigil(['accounts', 'list'], { VIGIL_DATA_DIR: dir.path }).stdout.trim()).to.equal('ID   NAME   PLAN   FEATURES   NAMESPACE');
  });

  it('create-key makes a new working key for an account named by name or id, and the old key keeps working', async () => {
    const first = create(['--name', 'acme']);
    const byName = JSON.parse(vigil(['accounts', 'create-key', '--account', 'acme'], { VIGIL_DATA_DIR: dir.path }).stdout);
    const byId = JSON.parse(vigil(['accounts', 'create-key', '--account', first.account_id, '--name', 'ci'], { VIGIL_DATA_DIR: dir.path }).stdout);
    expect(Object.keys(byName).sort()).to.deep.equal(['account_id', 'api_key', 'key_id']);
    expect(byName.account_id).to.equal(first.account_id);
    expect(byId.account_id).to.equal(first.account_id);
    expect(new Set([first.api_key, byName.api_key, byId.api_key]).size).to.equal(3);
    const running = await serve({ VIGIL_DATA_DIR: dir.path });
    try {
      for (const key of [first.api_key, byName.api_key, byId.api_key]) expect(await listTargets(running.port, key)).to.equal(200);
    } finally {
      await stop(running);
    }
  });

  it('create-key exits 2 without --account or for an unknown one', () => {
    expect(vigil(['accounts', 'create-key'], { VIGIL_DATA_DIR: dir.path })).to.deep.include({ code: 2 });
    const unknown = vigil(['accounts', 'create-key', '--account', 'nobody'], { VIGIL_DATA_DIR: dir.path });
    expect(unknown.code).to.equal(2);
    expect(unknown.stderr).to.match(/no account has the id or name 'nobody'/);
  });
});

describe('vigil webhooks add', function () {
  this.timeout(60_000);
  let dir: ReturnType<typeof tempDir>;

  beforeEach(() => {
    dir = tempDir();
  });
  afterEach(() => {
    dir.remove();
  });

  function accountId(): string {
    const created = vigil(['accounts', 'create', '--name', 'hooks'], { VIGIL_DATA_DIR: dir.path });
    return JSON.parse(created.stdout).account_id as string;
  }

  it('registers an https endpoint and prints one JSON line with its id and signing secret', () => {
    const result = vigil(['webhooks', 'add', '--account', accountId(), '--url', 'https://hooks.example.com/vigil'], { VIGIL_DATA_DIR: dir.path });
    expect(result.code, result.stderr).to.equal(0);
    const printed = JSON.parse(result.stdout.trim());
    expect(Object.keys(printed).sort()).to.deep.equal(['id', 'signing_secret']);
    expect(printed.signing_secret).to.match(/^whsec_[A-Za-z0-9_-]{43}$/);
  });

  const refused: Array<[string, string, RegExp]> = [
    ['a plain http URL', 'http://hooks.example.com/vigil', /https/],
    ['a private address', 'https://10.0.0.5/hook', /10\.0\.0\.0\/8/],
    ['loopback', 'https://127.0.0.1/hook', /127\.0\.0\.0\/8/],
    ['another scheme', 'ftp://hooks.example.com/', /https/],
  ];
  for (const [what, url, message] of refused) {
    it(`refuses ${what} with exit code 2 and a sentence saying why`, () => {
      const result = vigil(['webhooks', 'add', '--account', accountId(), '--url', url], { VIGIL_DATA_DIR: dir.path });
      expect(result.code).to.equal(2);
      expect(result.stderr).to.match(message);
      expect(result.stderr.trim().split('\n')).to.have.length(1);
      expect(result.stdout).to.equal('');
    });
  }

  it('accepts a loopback endpoint inside VIGIL_ALLOW_TARGETS', () => {
    const result = vigil(['webhooks', 'add', '--account', accountId(), '--url', 'https://127.0.0.1:8443/hook'], {
      VIGIL_DATA_DIR: dir.path,
      VIGIL_ALLOW_TARGETS: '127.0.0.0/8',
    });
    expect(result.code, result.stderr).to.equal(0);
  });

  it('takes the account by name as well as by id', () => {
    accountId();
    const result = vigil(['webhooks', 'add', '--account', 'hooks', '--url', 'https://hooks.example.com/vigil'], { VIGIL_DATA_DIR: dir.path });
    expect(result.code, result.stderr).to.equal(0);
  });

  it('exits 2 for an unknown account, pointing at vigil accounts list', () => {
    const result = vigil(['webhooks', 'add', '--account', 'no-such-account', '--url', 'https://hooks.example.com/'], { VIGIL_DATA_DIR: dir.path });
    expect(result.code).to.equal(2);
    expect(result.stderr.trim()).to.equal("vigil: no account has the id or name 'no-such-account'; 'vigil accounts list' shows them");
  });
});
