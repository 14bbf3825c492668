/**
 * Attaching a login recording (POST /v1/targets/{id}/auth/selenium) and an
 * API definition (POST /v1/targets/{id}/openapi) over HTTP against the real
 * service: the Target answers with the file names, refusals are 400 with a
 * sentence and change nothing, another account's target is 404.
 */
import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { TestService, type TestResponse } from '../support/test-service.js';

const fixture = (path: string): Buffer => readFileSync(new URL(`../fixtures/${path}`, import.meta.url));
const RECORDING = fixture('selenium/demo-login.side');
const OPENAPI_3 = fixture('openapi/demo-shop-3.0.yaml');
const SWAGGER_2 = fixture('openapi/demo-shop-2.0.json');
const MIB = 1024 * 1024;

interface FilePart {
  content: Uint8Array | string;
  name: string;
  field?: string;
}

let service: TestService;
let accounts = 0;

before(async () => {
  service = await TestService.start();
});
after(async () => service.stop());

function newCaller(): string {
  return service.createAccount(`attachments-${++accounts}`).apiKey;
}

async function newTarget(key: string, target = 'https://shop.example.com/'): Promise<string> {
  const response = await service.post('/v1/targets', { target }, { key });
  expect(response.status, response.text).to.equal(200);
  return response.body.data.id;
}

function upload(key: string, path: string, files: FilePart[], fields: Record<string, string> = {}): Promise<TestResponse> {
  const form = new FormData();
  for (const [name, value] of Object.entries(fields)) form.append(name, value);
  for (const file of files) form.append(file.field ?? 'file', new Blob([file.content]), file.name);
  return service.request('POST', path, { key, formData: form });
}

function expect400(response: TestResponse, message: RegExp): void {
  expect(response.status, response.text).to.equal(400);
  expect(response.body.error).to.match(message);
}

async function targetOf(key: string, id: string) {
  const response = await service.get(`/v1/targets/${id}`, { key });
  expect(response.status).to.equal(200);
  return response.body.data;
}

describe('POST /v1/targets/{id}/auth/selenium', () => {
  it('attaches a Selenium IDE project, shows its file name on the target and in lists, and replaces it on a second upload', async () => {
    const key = newCaller();
    const id = await newTarget(key);
    expect(await targetOf(key, id)).to.not.have.property('auth_selenium_file');
    const first = await upload(key, `/v1/targets/${id}/auth/selenium`, [{ content: RECORDING, name: 'demo-login.side' }]);
    expect(first.status, first.text).to.equal(200);
    expect(first.body.data).to.include({ id, auth_selenium_file: 'demo-login.side' });
    const version3 = JSON.stringify({ ...JSON.parse(RECORDING.toString()), version: '3.0' });
    const second = await upload(key, `/v1/targets/${id}/auth/selenium`, [{ content: version3, name: 'shop login.side' }]);
    expect(second.body.data.auth_selenium_file).to.equal('shop login.side');
    const list = await service.get('/v1/targets', { key });
    expect(list.body.data[0]).to.include({ id, auth_selenium_file: 'shop login.side' });
  });

  const refusals: Array<[string, FilePart[], RegExp, Record<string, string>?]> = [
    ['another extension', [{ content: RECORDING, name: 'login.json' }], /file name ends in \.side, not 'login\.json'/],
    ['broken JSON', [{ content: '{"version": "2.0", "tests": [', name: 'login.side' }], /not valid UTF-8 JSON/],
    ['JSON that is no recording', [{ content: '{"hello": "world"}', name: 'login.side' }], /not a Selenium IDE project \(it has no "tests" list\)/],
    ['an unknown format version', [{ content: '{"version": "1.1", "tests": []}', name: 'login.side' }], /format version "1\.1"/],
    ['a project without commands', [{ content: '{"version": "2.0", "tests": [{"name": "t", "commands": []}]}', name: 'login.side' }], /no test with commands/],
    ['no file', [], /a file part named 'file' is required/],
    [
      'a second file',
      [
        { content: RECORDING, name: 'a.side' },
        { content: RECORDING, name: 'b.side' },
      ],
      /exactly one file part 'file'/,
    ],
    ['a file part with another name', [{ content: RECORDING, name: 'a.side', field: 'recording' }], /must be named 'file', not 'recording'/],
    ['a text field', [{ content: RECORDING, name: 'a.side' }], /send only the file part 'file'; 'note' is not a field/, { note: 'hi' }],
    [
      'a file over 1 MiB',
      [{ content: `{"version":"2.0","tests":[],"pad":"${'x'.repeat(MIB)}"}`, name: 'big.side' }],
      /larger than 1 MiB, the limit for a login recording/,
    ],
  ];
  for (const [what, files, message, fields] of refusals) {
    it(`refuses ${what} with 400 and keeps the recording it had`, async () => {
      const key = newCaller();
      const id = await newTarget(key);
      await upload(key, `/v1/targets/${id}/auth/selenium`, [{ content: RECORDING, name: 'kept.side' }]);
      expect400(await upload(key, `/v1/targets/${id}/auth/selenium`, files, fields), message);
      expect((await targetOf(key, id)).auth_selenium_file).to.equal('kept.side');
    });
  }

  it("answers 404 for another account's target and for an unknown one, and changes nothing", async () => {
    const owner = newCaller();
    const id = await newTarget(owner);
    const other = newCaller();
    const response = await upload(other, `/v1/targets/${id}/auth/selenium`, [{ content: RECORDING, name: 'x.side' }]);
    expect(response.status, response.text).to.equal(404);
    expect((await upload(other, '/v1/targets/00000000-0000-0000-0000-000000000000/auth/selenium', [{ content: RECORDING, name: 'x.side' }])).status).to.equal(
      404,
    );
    expect(await targetOf(owner, id)).to.not.have.property('auth_selenium_file');
  });
});

describe('POST /v1/targets/{id}/openapi', () => {
  it('attaches an OpenAPI 3.0 YAML definition and a Swagger 2.0 JSON one, the second replacing the first', async () => {
    const key = newCaller();
    const id = await newTarget(key);
    const first = await upload(key, `/v1/targets/${id}/openapi`, [{ content: OPENAPI_3, name: 'demo-shop-3.0.yaml' }]);
    expect(first.status, first.text).to.equal(200);
    expect(first.body.data.openapi_file).to.equal('demo-shop-3.0.yaml');
    const second = await upload(key, `/v1/targets/${id}/openapi`, [{ content: SWAGGER_2, name: 'demo-shop-2.0.json' }]);
    expect(second.body.data.openapi_file).to.equal('demo-shop-2.0.json');
    expect((await service.get('/v1/targets', { key })).body.data[0].openapi_file).to.equal('demo-shop-2.0.json');
  });

  const yaml = OPENAPI_3.toString();
  const refusals: Array<[string, FilePart[], RegExp]> = [
    ['another extension', [{ content: OPENAPI_3, name: 'api.txt' }], /must end in \.json, \.yaml or \.yml/],
    ['broken JSON', [{ content: '{"openapi": "3.0.3",', name: 'api.json' }], /not valid JSON/],
    ['a document that is not OpenAPI', [{ content: 'name: my app\nversion: 1\n', name: 'api.yaml' }], /needs a top-level "openapi: 3\.x" or "swagger: '2\.0'"/],
    [
      'an invalid definition',
      [{ content: yaml.replace("'200':\n          description: A product", "'200':\n          summary: A product"), name: 'api.yaml' }],
      /not valid OpenAPI 3\.0\.3/,
    ],
    [
      'an external $ref to a URL',
      [
        {
          content: yaml.replace("'#/components/schemas/Product'\n  /products/{id}", "'https://schemas.example.com/product.json'\n  /products/{id}"),
          name: 'api.yaml',
        },
      ],
      /external \$ref "https:\/\/schemas\.example\.com\/product\.json" at #\/paths\/\/products\/get/,
    ],
    [
      'an external $ref to a file',
      [
        {
          content: yaml
            .replace("'#/components/schemas/Product'\n\ncomponents", "'./product.yaml'\ncomponents")
            .replace("$ref: '#/components/schemas/Product'\ncomponents", "$ref: './product.yaml'\ncomponents"),
          name: 'api.yaml',
        },
      ],
      /external \$ref "\.\/product\.yaml"/,
    ],
    [
      'YAML with an alias bomb',
      [
        {
          content: `openapi: 3.0.3\na: &a ["x","x","x","x","x","x","x","x","x"]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\nc: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]\nd: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]\ne: [*d,*d,*d,*d,*d,*d,*d,*d,*d]\n`,
          name: 'api.yaml',
        },
      ],
      /neither JSON nor valid YAML/,
    ],
    ['no file', [], /a file part named 'file' is required/],
    [
      'a second file',
      [
        { content: OPENAPI_3, name: 'a.yaml' },
        { content: OPENAPI_3, name: 'b.yaml' },
      ],
      /exactly one file part 'file'/,
    ],
    ['a file over 1 MiB', [{ content: `${yaml}x-pad: "${'x'.repeat(MIB)}"\n`, name: 'big.yaml' }], /larger than 1 MiB, the limit for an API definition/],
  ];
  for (const [what, files, message] of refusals) {
    it(`refuses ${what} with 400 and keeps the definition it had`, async () => {
      const key = newCaller();
      const id = await newTarget(key);
      await upload(key, `/v1/targets/${id}/openapi`, [{ content: SWAGGER_2, name: 'kept.json' }]);
      expect400(await upload(key, `/v1/targets/${id}/openapi`, files), message);
      expect((await targetOf(key, id)).openapi_file).to.equal('kept.json');
    });
  }

  it("answers 404 for another account's target", async () => {
    const owner = newCaller();
    const id = await newTarget(owner);
    const response = await upload(newCaller(), `/v1/targets/${id}/openapi`, [{ content: OPENAPI_3, name: 'api.yaml' }]);
    expect(response.status, response.text).to.equal(404);
    expect(await targetOf(owner, id)).to.not.have.property('openapi_file');
  });
});

describe('API definition checks under load', () => {
  it('checks ten uploads at once, two at a time, and answers each', async function () {
    // Ten definition checks in worker threads: seconds on a loaded 2-core machine; the bound is a safety net, not a timing.
    this.timeout(120_000);
    const key = newCaller();
    const ids = await Promise.all(Array.from({ length: 10 }, (_, index) => newTarget(key, `https://shop${index}.example.com/`)));
    const answers = await Promise.all(ids.map((id) => upload(key, `/v1/targets/${id}/openapi`, [{ content: OPENAPI_3, name: 'api.yaml' }])));
    expect(answers.map((answer) => answer.status)).to.deep.equal(Array(10).fill(200));
  });
});
