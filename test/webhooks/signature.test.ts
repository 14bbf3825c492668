import { expect } from 'chai';
import { signWebhook, verifyWebhook } from '../../src/domain/webhooks/signature.js';

// The published example (SPEC.md, Webhook signatures).
const SECRET = 'example-secret';
const TIMESTAMP = 1676612345678;
const BODY = '{"id":"an-event-id","type":"scan.created","data":{"id":"a-scan-id","type":"OWASP_ZAP"}}';
const SIGNATURE = '24d21b9ddab43faf648ddea1bfdc125bf143a8c501c167fbbce52fcec6c20022';

describe('webhook signatures', () => {
  it('sign the published example to the published lowercase hex digest', () => {
    expect(signWebhook(SECRET, TIMESTAMP, BODY)).to.equal(SIGNATURE);
  });

  it('verify the published example from its header values', () => {
    expect(verifyWebhook(SECRET, String(TIMESTAMP), BODY, SIGNATURE)).to.equal(true);
  });

  it('accept an uppercase hex signature header', () => {
    expect(verifyWebhook(SECRET, String(TIMESTAMP), BODY, SIGNATURE.toUpperCase())).to.equal(true);
  });

  const refusals: Array<{ name: string; secret?: string; timestamp?: string | undefined; body?: string; signature?: string | undefined }> = [
    { name: 'a body with one character changed', body: BODY.replace('OWASP_ZAP', 'OWASP_ZAQ') },
    { name: 'a body with added white space', body: `${BODY}\n` },
    { name: 'a different timestamp', timestamp: String(TIMESTAMP + 1) },
    { name: 'the same instant written with a leading zero', timestamp: `0${TIMESTAMP}` },
    { name: 'a timestamp that is not digits', timestamp: '1676612345678.0' },
    { name: 'a signature with one hex digit changed', signature: `${SIGNATURE.slice(0, -1)}1` },
    { name: 'a truncated signature', signature: SIGNATURE.slice(0, 62) },
    { name: 'a signature that is not hex', signature: `${SIGNATURE.slice(0, -1)}z` },
    { name: 'a base64 signature', signature: Buffer.from(SIGNATURE, 'hex').toString('base64') },
    { name: 'another secret', secret: 'other-secret' },
    { name: 'a missing signature header', signature: undefined },
    { name: 'a missing timestamp header', timestamp: undefined },
  ];
  for (const refusal of refusals) {
    it(`refuse ${refusal.name}`, () => {
      const timestamp = 'timestamp' in refusal ? refusal.timestamp : String(TIMESTAMP);
      const signature = 'signature' in refusal ? refusal.signature : SIGNATURE;
      expect(verifyWebhook(refusal.secret ?? SECRET, timestamp, refusal.body ?? BODY, signature)).to.equal(false);
    });
  }

  it('sign a body with non-ASCII characters as UTF-8', () => {
    const body = '{"name":"café ✓"}';
    const signature = signWebhook('s', 1, body);
    expect(signature).to.match(/^[0-9a-f]{64}$/);
    expect(verifyWebhook('s', '1', body, signature)).to.equal(true);
  });

  it('refuse to sign with a timestamp that is not whole milliseconds', () => {
    expect(() => signWebhook(SECRET, 1.5, BODY)).to.throw(RangeError);
    expect(() => signWebhook(SECRET, -1, BODY)).to.throw(RangeError);
  });
});
