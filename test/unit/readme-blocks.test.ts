import { expect } from 'chai';
import { fillPlaceholders, readmeBlocks } from '../support/readme-blocks.js';

describe('readmeBlocks (the README-as-test extractor)', () => {
  const markdown = [
    '# Title',
    '```sh',
    'echo one',
    '```',
    '```text',
    'not run',
    '```',
    '<!-- readme-test: skip (needs a cluster) -->',
    '```sh',
    'kubectl get scans',
    '```',
    '````md',
    '```sh',
    'inside another block',
    '```',
    '````',
    '```sh',
    'echo two',
    'echo three',
    '```',
  ].join('\n');

  it('lists sh blocks in order with their line, the skipped ones with the reason, and nothing inside other blocks', () => {
    expect(readmeBlocks(markdown)).to.deep.equal([
      { line: 2, code: 'echo one' },
      { line: 9, code: 'kubectl get scans', skip: 'needs a cluster' },
      { line: 17, code: 'echo two\necho three' },
    ]);
  });

  it('refuses a block that is never closed', () => {
    expect(() => readmeBlocks('```sh\necho open\n')).to.throw(/README line 1: a code block is never closed/);
  });

  it('fills the first key and the signing secret, and nothing else', () => {
    expect(fillPlaceholders('export KEY=vgl_…   # from the frame', {})).to.equal('export KEY="$FIRST_API_KEY"   # from the frame');
    expect(fillPlaceholders('WEBHOOK_SECRET=whsec_… make webhook-receiver', { signingSecret: 'whsec_abc' })).to.equal(
      'WEBHOOK_SECRET=whsec_abc make webhook-receiver',
    );
    expect(fillPlaceholders('WEBHOOK_SECRET=whsec_… x', {})).to.equal('WEBHOOK_SECRET=whsec_… x');
  });
});
