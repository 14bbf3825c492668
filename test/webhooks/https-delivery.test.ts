/**
 * Webhook delivery against real HTTPS receivers on 127.0.0.1, with a throwaway
 * CA and certificates made by openssl for this run.
 */
import { expect } from 'chai';
import type { LookupAddress } from 'node:dns';
import type { Agent } from 'undici';
import { parseCidrList, type Cidr } from '../../src/domain/targets/ipv4.js';
import { verifyWebhook } from '../../src/domain/webhooks/signature.js';
import { createWebhookAgent, deliverWebhook, type HostLookup } from '../../src/runtime/webhooks/https-delivery.js';
import { tempDir } from '../support/temp-dir.js';
import { makeCertificates, startReceiver, type Pems, type Receiver, type Respond } from '../support/https-receiver.js';

const answer =
  (status: number, headers: Record<string, string> = {}): Respond =>
  (_request, response) => {
    response.writeHead(status, headers);
    response.end('{"received":true}');
  };

const SECRET = 'endpoint-signing-secret';
const BODY = JSON.stringify({ id: 'an-event-id', event_created_at: '2024-03-01T12:00:00.000Z', type: 'scan.created', data: { id: 'a-scan-id' } });
const TIMESTAMP = 1709294400000;
const LOOPBACK: Cidr[] = parseCidrList('127.0.0.0/8');

function fakeDns(answers: Record<string, string[]>): HostLookup & { asked: string[] } {
  const asked: string[] = [];
  const lookup = async (hostname: string): Promise<LookupAddress[]> => {
    asked.push(hostname);
    return (answers[hostname] ?? []).map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
  };
  return Object.assign(lookup, { asked });
}

describe('webhook delivery over HTTPS', function () {
  this.timeout(30000);
  const dir = tempDir('vigil-webhook-tls-');
  let pems: Pems;
  const receivers: Receiver[] = [];
  const agents: Agent[] = [];

  before(() => {
    pems = makeCertificates(dir.path);
  });
  after(() => dir.remove());
  afterEach(async () => {
    await Promise.all(agents.splice(0).map((agent) => agent.destroy()));
    await Promise.all(receivers.splice(0).map((receiver) => receiver.close()));
  });

  async function receiver(respond: Respond, selfSigned = false): Promise<Receiver> {
    const started = selfSigned
      ? await startReceiver(pems.selfSignedKey, pems.selfSignedCert, respond)
      : await startReceiver(pems.serverKey, pems.serverCert, respond);
    receivers.push(started);
    return started;
  }

  function agent(options: { allow?: Cidr[]; ca?: boolean; lookup?: HostLookup } = {}): Agent {
    const created = createWebhookAgent({
      allow: options.allow ?? LOOPBACK,
      extraCaPem: options.ca === false ? undefined : pems.caCert,
      lookup: options.lookup,
    });
    agents.push(created);
    return created;
  }

  const deliver = (url: string, dispatcher: Agent, timeoutMs?: number) =>
    deliverWebhook({ url, secret: SECRET, body: BODY, timestampMs: TIMESTAMP, agent: dispatcher, timeoutMs });

  it('delivers to an allowed receiver whose certificate comes from the extra CA, signed so the receiver can verify', async () => {
    const target = await receiver(answer(202));
    const result = await deliver(target.url, agent());
    expect(result).to.include({ ok: true, status: 202 });
    expect(result.error).to.equal(undefined);
    expect(result.durationMs).to.be.a('number');
    expect(target.requests).to.have.length(1);
    const [received] = target.requests;
    expect(received!.method).to.equal('POST');
    expect(received!.path).to.equal('/hooks/vigil');
    expect(received!.headers['content-type']).to.equal('application/json');
    expect(received!.headers['x-service-timestamp']).to.equal(String(TIMESTAMP));
    expect(received!.body).to.equal(BODY);
    const signature = received!.headers['x-service-signature'] as string;
    expect(signature).to.match(/^[0-9a-f]{64}$/);
    expect(verifyWebhook(SECRET, received!.headers['x-service-timestamp'] as string, received!.body, signature)).to.equal(true);
  });

  it('refuses a loopback receiver outside the allowed ranges before connecting', async () => {
    const target = await receiver(answer(200));
    const result = await deliver(target.url, agent({ allow: [] }));
    expect(result.ok).to.equal(false);
    expect(result.status).to.equal(undefined);
    expect(result.error).to.match(/refused to connect to 127\.0\.0\.1: it is an address in the 127\.0\.0\.0\/8 loopback/);
    expect(target.connections).to.equal(0);
  });

  it('refuses a self-signed receiver certificate: TLS fails and no request arrives', async () => {
    const target = await receiver(answer(200), true);
    const result = await deliver(target.url, agent());
    expect(result.ok).to.equal(false);
    expect(result.error).to.match(/self[- ]signed|certificate/i);
    expect(target.requests).to.have.length(0);
  });

  it('refuses a certificate from the test CA when that CA is not configured', async () => {
    const target = await receiver(answer(200));
    const result = await deliver(target.url, agent({ ca: false }));
    expect(result.ok).to.equal(false);
    expect(result.error).to.match(/certificate/i);
    expect(target.requests).to.have.length(0);
  });

  it('reports a 500 as a failure with its status', async () => {
    const target = await receiver(answer(500));
    const result = await deliver(target.url, agent());
    expect(result).to.include({ ok: false, status: 500, error: 'HTTP 500' });
    expect(target.requests).to.have.length(1);
  });

  it('gives up on a receiver that never answers once the timeout passes', async () => {
    const target = await receiver(() => undefined);
    const result = await deliver(target.url, agent(), 300);
    expect(result.ok).to.equal(false);
    expect(result.status).to.equal(undefined);
    expect(result.error).to.equal('no response within 300 ms');
    expect(target.requests).to.have.length(1);
  });

  it('does not follow a redirect: a 302 is a failure', async () => {
    const target = await receiver((request, response) => {
      if (request.url === '/elsewhere') answer(200)(request, response);
      else answer(302, { location: `https://127.0.0.1:${target.port}/elsewhere` })(request, response);
    });
    const result = await deliver(target.url, agent());
    expect(result).to.include({ ok: false, status: 302 });
    expect(target.requests.map((request) => request.path)).to.deep.equal(['/hooks/vigil']);
  });

  it('reads a large response body only up to the cap and still reports success', async () => {
    const target = await receiver((_request, response) => {
      response.writeHead(200, { 'content-type': 'text/plain' });
      response.end('x'.repeat(1024 * 1024));
    });
    const result = await deliver(target.url, agent());
    expect(result).to.include({ ok: true, status: 200 });
  });

  it('refuses a public-looking name that resolves to a private address at connect time', async () => {
    const target = await receiver(answer(200));
    const dns = fakeDns({ 'hooks.example.com': ['10.0.0.5'] });
    const result = await deliver(`https://hooks.example.com:${target.port}/hooks/vigil`, agent({ lookup: dns }));
    expect(result.ok).to.equal(false);
    // The tenant reads the host and the rule; the internal DNS answer is kept for the service's log only (issue 26).
    expect(result.error).to.match(/^refused to connect to hooks\.example\.com: it resolves to an address in the 10\.0\.0\.0\/8 private-use/);
    expect(result.error).not.to.include('10.0.0.5');
    expect(result.refusedAddress).to.equal('10.0.0.5');
    expect(dns.asked).to.deep.equal(['hooks.example.com']);
    expect(target.connections).to.equal(0);
  });

  it('refuses a name when any of its addresses is refused, even if another is allowed', async () => {
    const target = await receiver(answer(200));
    const dns = fakeDns({ localhost: ['127.0.0.1', '10.0.0.5'] });
    const result = await deliver(`https://localhost:${target.port}/hooks/vigil`, agent({ lookup: dns }));
    expect(result.ok).to.equal(false);
    expect(result.error).to.match(/it resolves to an address in the 10\.0\.0\.0\/8 private-use/);
    expect(result.refusedAddress).to.equal('10.0.0.5');
    expect(target.connections).to.equal(0);
  });

  it('refuses a name that resolves to an IPv6 address', async () => {
    const target = await receiver(answer(200));
    const result = await deliver(`https://localhost:${target.port}/hooks/vigil`, agent({ lookup: fakeDns({ localhost: ['::1'] }) }));
    expect(result.ok).to.equal(false);
    expect(result.error).to.match(/it resolves to an IPv6 address; webhooks are delivered to IPv4 addresses only/);
    expect(target.connections).to.equal(0);
  });

  it('delivers to a name whose resolved address is allowed, verifying the certificate for that name', async () => {
    const target = await receiver(answer(200));
    const dns = fakeDns({ localhost: ['127.0.0.1'] });
    const result = await deliver(`https://localhost:${target.port}/hooks/vigil`, agent({ lookup: dns }));
    expect(result).to.include({ ok: true, status: 200 });
    expect(dns.asked).to.deep.equal(['localhost']);
    expect(target.requests).to.have.length(1);
  });

  it('refuses plain http without connecting', async () => {
    const target = await receiver(answer(200));
    const result = await deliver(`http://127.0.0.1:${target.port}/hooks/vigil`, agent());
    expect(result.ok).to.equal(false);
    expect(result.error).to.match(/https only/);
    expect(target.connections).to.equal(0);
  });
});
