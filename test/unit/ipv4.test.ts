import { expect } from 'chai';
import { cidrContains, formatIpv4, isAllowed, looksLikeIpv4, parseCidr, parseCidrList, parseIpv4, specialPurposeRange } from '../../src/domain/targets/ipv4.js';

describe('IPv4 arithmetic', () => {
  describe('parseIpv4', () => {
    const valid: ReadonlyArray<[string, string, number]> = [
      ['the lowest address is 0', '0.0.0.0', 0],
      ['the highest address is 2^32 - 1', '255.255.255.255', 0xffffffff],
      ['octets are read most significant first', '1.2.3.4', 0x01020304],
      ['a high first octet stays unsigned', '200.0.0.1', 0xc8000001],
    ];
    for (const [name, text, value] of valid) {
      it(name, () => expect(parseIpv4(text)).to.equal(value));
    }

    const invalid: ReadonlyArray<[string, string]> = [
      ['the empty string is not an address', ''],
      ['three parts are not an address', '1.2.3'],
      ['five parts are not an address', '1.2.3.4.5'],
      ['an octet with a leading zero is not an address', '01.2.3.4'],
      ['an octet above 255 is not an address', '1.2.3.256'],
      ['a four-digit octet is not an address', '1000.0.0.1'],
      ['a hexadecimal octet is not an address', '0x7f.0.0.1'],
      ['a negative octet is not an address', '1.2.3.-4'],
      ['a signed octet is not an address', '+1.2.3.4'],
      ['an exponent is not an address', '1e2.0.0.1'],
      ['an empty part is not an address', '1..2.3'],
      ['a trailing dot is not an address', '1.2.3.4.'],
      ['surrounding white space is not an address', ' 1.2.3.4'],
      ['the integer form is not an address', '16909060'],
    ];
    for (const [name, text] of invalid) {
      it(name, () => expect(parseIpv4(text)).to.equal(undefined));
    }
  });

  describe('looksLikeIpv4', () => {
    const cases: ReadonlyArray<[string, string, boolean]> = [
      ['a canonical address looks like IPv4', '8.8.8.8', true],
      ['a short dotted form looks like IPv4 so it is refused as an address, not read as a name', '1.2.3', true],
      ['digits without a dot do not', '2130706433', false],
      ['a name does not', 'example.com', false],
      ['a hexadecimal form does not', '0x7f.0.0.1', false],
    ];
    for (const [name, text, expected] of cases) {
      it(name, () => expect(looksLikeIpv4(text)).to.equal(expected));
    }
  });

  describe('parseCidr', () => {
    it('reads /0 as the whole address space', () => {
      const cidr = parseCidr('0.0.0.0/0');
      expect(cidr).to.deep.equal({ base: 0, prefix: 0, text: '0.0.0.0/0' });
      expect(cidrContains(cidr, 0)).to.equal(true);
      expect(cidrContains(cidr, 0xffffffff)).to.equal(true);
    });

    it('reads /32 as one address', () => {
      const cidr = parseCidr('8.8.8.8/32');
      expect(cidr.prefix).to.equal(32);
      expect(cidrContains(cidr, parseIpv4('8.8.8.8')!)).to.equal(true);
      expect(cidrContains(cidr, parseIpv4('8.8.8.9')!)).to.equal(false);
      expect(cidrContains(cidr, parseIpv4('8.8.8.7')!)).to.equal(false);
    });

    it('reads an address without a prefix as /32', () => {
      expect(parseCidr('1.2.3.4')).to.deep.equal({ base: 0x01020304, prefix: 32, text: '1.2.3.4' });
    });

    it('clears host bits set in the address', () => {
      const cidr = parseCidr('10.1.2.3/8');
      expect(formatIpv4(cidr.base)).to.equal('10.0.0.0');
      expect(cidr.prefix).to.equal(8);
      expect(cidrContains(cidr, parseIpv4('10.255.255.255')!)).to.equal(true);
    });

    it('clears host bits of a /1 with the top bit set, staying unsigned', () => {
      const cidr = parseCidr('200.1.1.1/1');
      expect(cidr.base).to.equal(0x80000000);
      expect(cidrContains(cidr, 0xffffffff)).to.equal(true);
      expect(cidrContains(cidr, 0x7fffffff)).to.equal(false);
    });

    it('trims surrounding white space', () => {
      expect(parseCidr(' 10.0.0.0/8 ')).to.deep.equal({ base: 0x0a000000, prefix: 8, text: '10.0.0.0/8' });
    });

    const bad: ReadonlyArray<[string, string, RegExp]> = [
      ['a prefix of 33 is refused', '10.0.0.0/33', /prefix length outside 0\.\.32/],
      ['a prefix of -1 is refused', '10.0.0.0/-1', /prefix length outside 0\.\.32/],
      ['a prefix that is not a number is refused', '10.0.0.0/a', /prefix length outside 0\.\.32/],
      ['an empty prefix is refused', '10.0.0.0/', /prefix length outside 0\.\.32/],
      ['a fractional prefix is refused', '10.0.0.0/8.5', /prefix length outside 0\.\.32/],
      ['two prefixes are refused', '10.0.0.0/8/8', /not an IPv4 CIDR/],
      ['an IPv6 CIDR is refused', '2001:db8::/32', /not an IPv4 CIDR/],
      ['the IPv6 default route is refused', '::/0', /not an IPv4 CIDR/],
      ['a non-canonical address is refused', '010.0.0.0/8', /not an IPv4 CIDR/],
      ['a word is refused', 'nonsense', /not an IPv4 CIDR/],
    ];
    for (const [name, text, message] of bad) {
      it(name, () => expect(() => parseCidr(text)).to.throw(Error, message));
    }
  });

  describe('cidrContains', () => {
    const cases: ReadonlyArray<[string, string, string, boolean]> = [
      ['172.16.0.0/12 holds its last address', '172.16.0.0/12', '172.31.255.255', true],
      ['172.16.0.0/12 does not hold the next address', '172.16.0.0/12', '172.32.0.0', false],
      ['172.16.0.0/12 does not hold the previous address', '172.16.0.0/12', '172.15.255.255', false],
      ['224.0.0.0/4 holds 239.255.255.255', '224.0.0.0/4', '239.255.255.255', true],
      ['224.0.0.0/4 does not hold 240.0.0.0', '224.0.0.0/4', '240.0.0.0', false],
      ['240.0.0.0/4 holds the broadcast address', '240.0.0.0/4', '255.255.255.255', true],
    ];
    for (const [name, cidr, address, expected] of cases) {
      it(name, () => expect(cidrContains(parseCidr(cidr), parseIpv4(address)!)).to.equal(expected));
    }
  });

  describe('formatIpv4', () => {
    const cases: ReadonlyArray<[string, number, string]> = [
      ['0 is 0.0.0.0', 0, '0.0.0.0'],
      ['2^32 - 1 is 255.255.255.255', 0xffffffff, '255.255.255.255'],
      ['0x01020304 is 1.2.3.4', 0x01020304, '1.2.3.4'],
      ['0xc0a80001 is 192.168.0.1', 0xc0a80001, '192.168.0.1'],
    ];
    for (const [name, value, text] of cases) {
      it(name, () => expect(formatIpv4(value)).to.equal(text));
    }

    it('round-trips with parseIpv4', () => {
      for (const text of ['93.184.216.34', '10.0.0.1', '255.0.255.0', '0.0.0.1']) {
        expect(formatIpv4(parseIpv4(text)!)).to.equal(text);
      }
    });
  });

  describe('parseCidrList', () => {
    it('reads comma-separated CIDRs, trimming each', () => {
      expect(parseCidrList('10.0.0.0/8, 192.168.0.0/16').map((cidr) => cidr.text)).to.deep.equal(['10.0.0.0/8', '192.168.0.0/16']);
    });
    it('reads an empty string and stray commas as no CIDR', () => {
      expect(parseCidrList('')).to.deep.equal([]);
      expect(parseCidrList(' , ,')).to.deep.equal([]);
    });
    it('refuses the whole list when one item is bad', () => {
      expect(() => parseCidrList('10.0.0.0/8,nonsense')).to.throw(Error, /nonsense/);
    });
  });

  describe('specialPurposeRange and isAllowed', () => {
    it('finds no range for a public address', () => {
      expect(specialPurposeRange(parseIpv4('8.8.8.8')!)).to.equal(undefined);
    });
    it('names the range and its description for a private address', () => {
      expect(specialPurposeRange(parseIpv4('192.168.1.1')!)).to.equal('192.168.0.0/16 private-use (RFC 1918)');
    });
    it('allows an address covered by one of several CIDRs', () => {
      const allow = parseCidrList('10.0.0.0/8,127.0.0.0/8');
      expect(isAllowed(parseIpv4('127.0.0.1')!, allow)).to.equal(true);
      expect(isAllowed(parseIpv4('192.168.0.1')!, allow)).to.equal(false);
    });
    it('allows nothing with an empty list', () => {
      expect(isAllowed(parseIpv4('127.0.0.1')!, [])).to.equal(false);
    });
  });
});
