import { expect } from 'chai';
import { InvalidRequestError } from '../../src/domain/errors.js';
import { parseCidrList, type Cidr } from '../../src/domain/targets/ipv4.js';
import { MAX_ENDPOINT_URL_LENGTH, parseWebhookEndpointUrl } from '../../src/domain/webhooks/endpoint-url.js';

const NO_ALLOW: readonly Cidr[] = [];

describe('webhook endpoint URLs', () => {
  const accepted: Array<[input: string, url: string, host: string, kind: 'IPV4' | 'FQDN']> = [
    ['https://hooks.example.com/vigil', 'https://hooks.example.com/vigil', 'hooks.example.com', 'FQDN'],
    ['HTTPS://Hooks.Example.COM/Path?x=1', 'https://hooks.example.com/Path?x=1', 'hooks.example.com', 'FQDN'],
    ['https://hooks.example.com:8443/', 'https://hooks.example.com:8443/', 'hooks.example.com', 'FQDN'],
    ['https://hooks.example.com./in', 'https://hooks.example.com/in', 'hooks.example.com', 'FQDN'],
    ['  https://93.184.216.34/hook  ', 'https://93.184.216.34/hook', '93.184.216.34', 'IPV4'],
  ];
  for (const [input, url, host, kind] of accepted) {
    it(`accepts ${input.trim()}`, () => {
      expect(parseWebhookEndpointUrl(input, NO_ALLOW)).to.deep.equal({ url, host, hostKind: kind });
    });
  }

  const refused: Array<[input: string, fragment: string | RegExp]> = [
    ['http://hooks.example.com/vigil', /scheme 'http'.*https:\/\//],
    ['ftp://hooks.example.com/', "scheme 'ftp'"],
    ['hooks.example.com/vigil', 'not an absolute URL'],
    ['javascript:alert(1)', "scheme 'javascript'"],
    ['https://', 'not a valid URL'],
    ['https://user:pass@hooks.example.com/', 'credentials'],
    ['https://hooks.example.com/#top', 'fragment'],
    ['https://hooks.example.com/a b', 'white space'],
    ['https://[::1]/hook', 'IPv6'],
    ['https://[2001:db8::1]:8443/', 'IPv6'],
    ['https://127.0.0.1/hook', 'loopback'],
    ['https://10.1.2.3/hook', 'private-use'],
    ['https://169.254.169.254/latest/meta-data', 'link-local'],
    // The URL parser reads octal and integer hosts as the address they mean; that address is refused.
    ['https://0177.0.0.1/', 'loopback'],
    ['https://2130706433/', 'loopback'],
    ['https://localhost/hook', 'fully qualified'],
    ['https://hooks.localhost/hook', '.localhost'],
    ['https://printer.local/', '.local'],
    ['https://intranet/hook', 'fully qualified'],
    ['', 'must not be empty'],
  ];
  for (const [input, fragment] of refused) {
    it(`refuses '${input}' with a sentence`, () => {
      expect(() => parseWebhookEndpointUrl(input, NO_ALLOW)).to.throw(InvalidRequestError, fragment);
    });
  }

  it('names the webhook endpoint URL, not a target, in refusals', () => {
    expect(() => parseWebhookEndpointUrl('https://10.1.2.3/', NO_ALLOW)).to.throw(/^webhook endpoint URL 'https:\/\/10\.1\.2\.3\/' is in the 10\.0\.0\.0\/8/);
  });

  it('accepts a private address inside the allowed ranges', () => {
    const allow = parseCidrList('10.0.0.0/8,127.0.0.0/8');
    expect(parseWebhookEndpointUrl('https://10.1.2.3/hook', allow).host).to.equal('10.1.2.3');
    expect(parseWebhookEndpointUrl('https://127.0.0.1:8443/', allow).url).to.equal('https://127.0.0.1:8443/');
  });

  it(`refuses URLs longer than ${MAX_ENDPOINT_URL_LENGTH} characters`, () => {
    const long = `https://hooks.example.com/${'a'.repeat(MAX_ENDPOINT_URL_LENGTH)}`;
    expect(() => parseWebhookEndpointUrl(long, NO_ALLOW)).to.throw(InvalidRequestError, `at most ${MAX_ENDPOINT_URL_LENGTH}`);
    const encodedLong = `https://hooks.example.com/${'é'.repeat(700)}`;
    expect(() => parseWebhookEndpointUrl(encodedLong, NO_ALLOW)).to.throw(InvalidRequestError, 'percent-encoded');
  });
});
