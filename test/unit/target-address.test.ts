import { expect } from 'chai';
import { InvalidRequestError } from '../../src/domain/errors.js';
import { parseCidrList, SPECIAL_PURPOSE_RANGES, type Cidr } from '../../src/domain/targets/ipv4.js';
import { MAX_TARGET_LENGTH, parseTargetAddress, type TargetKind } from '../../src/domain/targets/target-address.js';
import { NON_PUBLIC_URLS } from '../support/non-public-urls.js';

const NO_ALLOW: readonly Cidr[] = [];

function expectRefused(input: string, messageFragment: string | RegExp, allow: readonly Cidr[] = NO_ALLOW): void {
  expect(() => parseTargetAddress(input, allow)).to.throw(InvalidRequestError, messageFragment);
}

// The IANA special-purpose registry plus multicast, written out independently of src so that a range
// dropped from ipv4.ts fails here. `name` is a word the refusal message must carry.
const SPECIAL_RANGES: ReadonlyArray<{ cidr: string; name: string }> = [
  { cidr: '0.0.0.0/8', name: 'this network' },
  { cidr: '10.0.0.0/8', name: 'private-use' },
  { cidr: '100.64.0.0/10', name: 'shared address space' },
  { cidr: '127.0.0.0/8', name: 'loopback' },
  { cidr: '169.254.0.0/16', name: 'link-local' },
  { cidr: '172.16.0.0/12', name: 'private-use' },
  { cidr: '192.0.0.0/24', name: 'IETF protocol assignments' },
  { cidr: '192.0.2.0/24', name: 'TEST-NET-1' },
  { cidr: '192.31.196.0/24', name: 'AS112' },
  { cidr: '192.52.193.0/24', name: 'AMT' },
  { cidr: '192.88.99.0/24', name: '6to4' },
  { cidr: '192.168.0.0/16', name: 'private-use' },
  { cidr: '192.175.48.0/24', name: 'AS112' },
  { cidr: '198.18.0.0/15', name: 'benchmarking' },
  { cidr: '198.51.100.0/24', name: 'TEST-NET-2' },
  { cidr: '203.0.113.0/24', name: 'TEST-NET-3' },
  { cidr: '224.0.0.0/4', name: 'multicast' },
  { cidr: '240.0.0.0/4', name: 'reserved' },
  // The most specific range names the address: 255.255.255.255 is limited broadcast, not 240.0.0.0/4.
  { cidr: '255.255.255.255/32', name: 'limited broadcast' },
];

// Local arithmetic, so these tests do not trust the code they check.
function toInt(dotted: string): number {
  return dotted.split('.').reduce((value, octet) => value * 256 + Number(octet), 0);
}
function toDotted(value: number): string {
  return [24, 16, 8, 0].map((shift) => Math.floor(value / 2 ** shift) % 256).join('.');
}
function bounds(cidr: string): { first: number; last: number } {
  const [address, prefix] = cidr.split('/');
  const size = 2 ** (32 - Number(prefix));
  const first = toInt(address!);
  return { first, last: first + size - 1 };
}
/** The most specific listed range holding the address, or undefined for a public address. */
function mostSpecificRange(address: number): string | undefined {
  return SPECIAL_RANGES.map((range) => range.cidr)
    .filter((cidr) => bounds(cidr).first <= address && address <= bounds(cidr).last)
    .sort((a, b) => Number(b.split('/')[1]) - Number(a.split('/')[1]))[0];
}

describe('parseTargetAddress', () => {
  describe('special-purpose IPv4 ranges', () => {
    it('lists exactly the IANA special-purpose ranges plus multicast', () => {
      expect([...SPECIAL_PURPOSE_RANGES]).to.have.members(SPECIAL_RANGES.map((range) => range.cidr));
      expect(SPECIAL_PURPOSE_RANGES).to.have.length(SPECIAL_RANGES.length);
    });

    for (const { cidr, name } of SPECIAL_RANGES) {
      const { first, last } = bounds(cidr);
      // 255.255.255.255 is also the last address of 240.0.0.0/4; it has its own row below.
      const lastChecked = cidr === '240.0.0.0/4' ? last - 1 : last;
      const cases: Array<[string, number]> =
        first === lastChecked
          ? [['only', first]]
          : [
              ['first', first],
              ['last', lastChecked],
            ];
      for (const [which, address] of cases) {
        const dotted = toDotted(address);
        it(`refuses ${dotted}, the ${which} address of ${cidr}, naming that range`, () => {
          expectRefused(dotted, `${cidr} `);
          expectRefused(dotted, name);
          expectRefused(dotted, 'only public IPv4 addresses');
        });
        it(`refuses http://${dotted}/ as a URL host, naming ${cidr}`, () => {
          expectRefused(`http://${dotted}/`, `${cidr} `);
        });
      }

      const neighbours: Array<[string, number]> = [
        ['just below', first - 1],
        ['just above', last + 1],
      ];
      for (const [where, neighbour] of neighbours) {
        if (neighbour < 0 || neighbour > 0xffffffff || mostSpecificRange(neighbour) !== undefined) continue;
        const dotted = toDotted(neighbour);
        it(`accepts ${dotted}, the public address ${where} ${cidr}`, () => {
          expect(parseTargetAddress(dotted, NO_ALLOW)).to.deep.equal({ value: dotted, kind: 'IPV4', host: dotted });
        });
      }
    }
  });

  describe('refused forms', () => {
    const refused: ReadonlyArray<{ name: string; input: string; message: string | RegExp }> = [
      // IPv6
      { name: 'the IPv6 loopback ::1 is refused as IPv6', input: '::1', message: 'IPv6' },
      { name: 'the IPv6 documentation address 2001:db8::1 is refused as IPv6', input: '2001:db8::1', message: 'IPv6' },
      { name: 'the IPv6 link-local fe80::1 is refused as IPv6', input: 'fe80::1', message: 'IPv6' },
      { name: 'the IPv4-mapped ::ffff:127.0.0.1 is refused as IPv6', input: '::ffff:127.0.0.1', message: 'IPv6' },
      { name: 'a bracketed [::1] is refused as IPv6', input: '[::1]', message: 'IPv6' },
      // CIDR ranges
      { name: 'the private CIDR 10.0.0.0/8 is refused as a CIDR range', input: '10.0.0.0/8', message: 'CIDR' },
      { name: 'the public CIDR 8.8.8.0/24 is refused as a CIDR range', input: '8.8.8.0/24', message: 'CIDR' },
      { name: 'a /32 CIDR is refused as a CIDR range', input: '8.8.8.8/32', message: 'CIDR' },
      { name: 'an IPv6 /32 range is refused as an IPv6 range', input: '2001:db8::/32', message: 'IPv6 range' },
      // Non-canonical IPv4
      { name: 'an octet with a leading zero (010.1.1.1, octal to some tools) is refused', input: '010.1.1.1', message: 'not a valid IPv4 address' },
      { name: 'a three-part address 1.2.3 is refused', input: '1.2.3', message: 'not a valid IPv4 address' },
      { name: 'a hexadecimal octet 0x7f.0.0.1 is refused', input: '0x7f.0.0.1', message: /not a valid domain name|not a valid IPv4/ },
      { name: 'the integer form 2130706433 of 127.0.0.1 is refused', input: '2130706433', message: /not a (valid domain name|fully qualified)/ },
      { name: 'an octet above 255 (256.1.1.1) is refused', input: '256.1.1.1', message: 'not a valid IPv4 address' },
      { name: 'a five-part address 1.2.3.4.5 is refused', input: '1.2.3.4.5', message: 'not a valid IPv4 address' },
      { name: 'an address with an empty part 1..2.3 is refused', input: '1..2.3', message: 'not a valid IPv4 address' },
      // Schemes
      { name: 'an ftp:// URL is refused naming its scheme', input: 'ftp://example.com/file', message: "scheme 'ftp'" },
      { name: 'a file:// URL is refused naming its scheme', input: 'file:///etc/passwd', message: "scheme 'file'" },
      { name: 'a javascript: URL is refused naming its scheme', input: 'javascript:alert(1)', message: "scheme 'javascript'" },
      { name: 'a mailto: URL is refused naming its scheme', input: 'mailto:admin@example.com', message: "scheme 'mailto'" },
      { name: 'a gopher:// URL is refused naming its scheme', input: 'gopher://example.com/', message: "scheme 'gopher'" },
      { name: 'an upper-case FTP:// scheme is refused too', input: 'FTP://example.com/', message: "scheme 'ftp'" },
      { name: 'a URL with a single slash after the scheme is refused', input: 'http:/example.com', message: /scheme|not a valid/ },
      // URL hosts that are not public, in every form the URL parser reads as one
      ...NON_PUBLIC_URLS,
      // Credentials
      { name: 'a URL with a user name and password is refused', input: 'https://user:secret@example.com/', message: 'credentials' },
      { name: 'a URL with a user name only is refused', input: 'http://admin@example.com/', message: 'credentials' },
      // Ports without a scheme
      { name: 'a host name with a port but no scheme is refused', input: 'example.com:8080', message: 'port' },
      { name: 'an IPv4 address with a port but no scheme is refused', input: '8.8.8.8:53', message: 'port' },
      // White space and empty
      { name: 'the empty string is refused', input: '', message: 'must not be empty' },
      { name: 'a string of spaces is refused as empty', input: '   ', message: 'must not be empty' },
      { name: 'a name with a space inside is refused', input: 'exa mple.com', message: 'white space' },
      { name: 'a name with a line break inside is refused', input: 'example.com\nevil.com', message: 'white space' },
      { name: 'an address with a tab inside is refused', input: '8.8.\t8.8', message: 'white space' },
      { name: 'a URL with a space in its host is refused', input: 'http://exa mple.com/', message: 'white space' },
      { name: 'a URL with a tab in its host is refused, not silently joined', input: 'http://exa\tmple.com/', message: 'white space' },
      { name: 'a URL with a newline in its path is refused', input: 'http://example.com/a\nb', message: 'white space' },
      // Names that cannot be public
      { name: 'the single-label name localhost is refused', input: 'localhost', message: 'fully qualified' },
      { name: 'the single-label name intranet is refused', input: 'intranet', message: 'fully qualified' },
      { name: 'a name under .localhost is refused', input: 'app.localhost', message: '.localhost' },
      { name: 'a name under .local is refused', input: 'printer.local', message: '.local' },
      { name: 'a name under .internal is refused', input: 'db.corp.internal', message: '.internal' },
      { name: 'a name under .home.arpa is refused', input: 'nas.home.arpa', message: '.home.arpa' },
      { name: 'a name under .onion is refused', input: 'expyuzz4wqqyqhjn.onion', message: '.onion' },
      { name: 'an upper-case name under .LOCAL is refused', input: 'Printer.LOCAL', message: '.local' },
      { name: 'a name with a numeric top-level domain is refused', input: 'example.123', message: /numeric|not a valid domain name/ },
      { name: 'a label starting with a hyphen is refused', input: '-bad.example.com', message: 'label' },
      { name: 'a label ending with a hyphen is refused', input: 'bad-.example.com', message: 'label' },
      { name: 'a label with an underscore is refused', input: 'under_score.example.com', message: 'label' },
      { name: 'an empty label is refused', input: 'a..example.com', message: /label|not a valid domain/ },
    ];
    for (const { name, input, message } of refused) {
      it(name, () => expectRefused(input, message));
    }
  });

  describe('length limits', () => {
    const label = (length: number) => 'a'.repeat(length);
    const hostOf253 = [label(63), label(63), label(63), label(61)].join('.');

    it('accepts a label of 63 characters', () => {
      expect(parseTargetAddress(`${label(63)}.com`, NO_ALLOW).value).to.equal(`${label(63)}.com`);
    });
    it('refuses a label of 64 characters', () => {
      expectRefused(`${label(64)}.com`, 'label');
    });
    it('accepts a host name of 253 characters', () => {
      expect(hostOf253).to.have.length(253);
      expect(parseTargetAddress(hostOf253, NO_ALLOW)).to.deep.equal({ value: hostOf253, kind: 'FQDN', host: hostOf253 });
    });
    it('accepts a host name of 253 characters written with a trailing dot', () => {
      expect(parseTargetAddress(`${hostOf253}.`, NO_ALLOW).value).to.equal(hostOf253);
    });
    it('refuses a host name of 254 characters', () => {
      expectRefused(`${hostOf253}a`, 'not a valid domain name');
    });
    it('refuses a URL whose host name has 254 characters', () => {
      expectRefused(`https://${hostOf253}a/`, 'not a valid domain name');
    });
    it('accepts a URL of exactly 2048 characters', () => {
      const prefix = 'https://example.com/';
      const url = prefix + 'p'.repeat(MAX_TARGET_LENGTH - prefix.length);
      expect(url).to.have.length(2048);
      expect(parseTargetAddress(url, NO_ALLOW)).to.deep.equal({ value: url, kind: 'URL', host: 'example.com' });
    });
    it('refuses a URL of 2049 characters, naming the limit', () => {
      const prefix = 'https://example.com/';
      expectRefused(prefix + 'p'.repeat(MAX_TARGET_LENGTH + 1 - prefix.length), 'at most 2048 characters');
    });
    // Percent-encoding can multiply the length: this 1020-character URL normalises to 6020 characters.
    it('refuses a URL whose normalised, percent-encoded form is longer than 2048 characters', () => {
      expectRefused(`https://example.com/${'ä'.repeat(1000)}`, '2048');
    });
  });

  describe('normalisation', () => {
    const normalised: ReadonlyArray<{ name: string; input: string; value: string; kind: TargetKind; host: string }> = [
      { name: 'an IDN name is stored in punycode', input: 'bücher.de', value: 'xn--bcher-kva.de', kind: 'FQDN', host: 'xn--bcher-kva.de' },
      {
        name: 'an IDN URL host is stored in punycode',
        input: 'https://bücher.de/x',
        value: 'https://xn--bcher-kva.de/x',
        kind: 'URL',
        host: 'xn--bcher-kva.de',
      },
      { name: 'a name is lower-cased and loses its trailing dot', input: 'Example.COM.', value: 'example.com', kind: 'FQDN', host: 'example.com' },
      { name: 'surrounding white space is trimmed', input: '  example.com \n', value: 'example.com', kind: 'FQDN', host: 'example.com' },
      {
        name: 'a URL loses its default port and gets a lower-case scheme and host, the path keeping its case',
        input: 'HTTPS://Example.com:443/Path',
        value: 'https://example.com/Path',
        kind: 'URL',
        host: 'example.com',
      },
      { name: 'a URL keeps a non-default port', input: 'http://example.com:8080/app', value: 'http://example.com:8080/app', kind: 'URL', host: 'example.com' },
      {
        name: 'a URL without a path stays without a trailing slash',
        input: 'http://example.com',
        value: 'http://example.com',
        kind: 'URL',
        host: 'example.com',
      },
      { name: 'a URL with a bare slash keeps it', input: 'http://example.com/', value: 'http://example.com/', kind: 'URL', host: 'example.com' },
      {
        name: 'a URL with a query keeps the query',
        input: 'https://example.com/login?next=/a',
        value: 'https://example.com/login?next=/a',
        kind: 'URL',
        host: 'example.com',
      },
      {
        name: 'a URL host loses its trailing dot, as a bare name does',
        input: 'http://Example.com./a',
        value: 'http://example.com/a',
        kind: 'URL',
        host: 'example.com',
      },
      {
        name: 'a URL host with a trailing dot keeps a non-default port',
        input: 'https://example.com.:8443',
        value: 'https://example.com:8443',
        kind: 'URL',
        host: 'example.com',
      },
    ];
    for (const { name, input, value, kind, host } of normalised) {
      it(name, () => expect(parseTargetAddress(input, NO_ALLOW)).to.deep.equal({ value, kind, host }));
    }
  });

  describe('allow list', () => {
    const loopback = parseCidrList('127.0.0.0/8');

    it('accepts a loopback address covered by the allow list', () => {
      expect(parseTargetAddress('127.0.0.1', loopback)).to.deep.equal({ value: '127.0.0.1', kind: 'IPV4', host: '127.0.0.1' });
    });
    it('accepts a loopback URL covered by the allow list', () => {
      expect(parseTargetAddress('http://127.0.0.1:8080/x', loopback).value).to.equal('http://127.0.0.1:8080/x');
    });
    it('still refuses a private address outside the allow list', () => {
      expectRefused('10.0.0.1', '10.0.0.0/8', loopback);
    });
    it('does not make the IPv6 loopback acceptable', () => {
      expectRefused('::1', 'IPv6', loopback);
      expectRefused('http://[::1]/', 'IPv6', loopback);
    });
    it('does not make a CIDR range acceptable, even the allowed one', () => {
      expectRefused('127.0.0.0/8', 'CIDR', loopback);
    });
    it('does not make a non-canonical loopback form acceptable', () => {
      expectRefused('0127.0.0.1', 'not a valid IPv4 address', loopback);
    });
  });

  describe('public targets', () => {
    const accepted: ReadonlyArray<{ input: string; kind: TargetKind; host: string }> = [
      { input: '8.8.8.8', kind: 'IPV4', host: '8.8.8.8' },
      { input: '1.1.1.1', kind: 'IPV4', host: '1.1.1.1' },
      { input: '93.184.216.34', kind: 'IPV4', host: '93.184.216.34' },
      { input: 'example.com', kind: 'FQDN', host: 'example.com' },
      { input: 'scanme.nmap.org', kind: 'FQDN', host: 'scanme.nmap.org' },
      { input: 'https://example.com/login?next=/a', kind: 'URL', host: 'example.com' },
      { input: 'http://8.8.8.8:8080/', kind: 'URL', host: '8.8.8.8' },
    ];
    for (const { input, kind, host } of accepted) {
      it(`accepts ${input} unchanged as ${kind}`, () => {
        expect(parseTargetAddress(input, NO_ALLOW)).to.deep.equal({ value: input, kind, host });
      });
    }
  });
});
