import { expect } from 'chai';
import type { z } from 'zod';
import { TargetCreate, TargetUpdate, ZapCookie, ZapHeader, ZapSettingsInput } from '../../src/api/schemas/targets.js';

interface SchemaCase {
  name: string;
  schema: z.ZodType;
  input: unknown;
  valid: boolean;
}

function runTable(cases: readonly SchemaCase[]): void {
  for (const { name, schema, input, valid } of cases) {
    it(name, () => {
      const result = schema.safeParse(input);
      expect(result.success, result.success ? 'accepted' : JSON.stringify(result.error.issues)).to.equal(valid);
    });
  }
}

const cookie = (overrides: Record<string, unknown>) => ({ name: 'session', value: 'abc', ...overrides });
const header = (key: string, value: string) => ({ headers: [{ key, value }] });

describe('target request schemas', () => {
  describe('ZapSettingsInput seed_urls', () => {
    runTable([
      { name: 'an https URL is a seed URL', schema: ZapSettingsInput, input: { seed_urls: ['https://example.com/start'] }, valid: true },
      {
        name: 'an http URL with a port and query is a seed URL',
        schema: ZapSettingsInput,
        input: { seed_urls: ['http://example.com:8080/a?b=c'] },
        valid: true,
      },
      { name: 'an upper-case scheme is a seed URL', schema: ZapSettingsInput, input: { seed_urls: ['HTTPS://EXAMPLE.COM/'] }, valid: true },
      { name: 'an ftp URL is not a seed URL', schema: ZapSettingsInput, input: { seed_urls: ['ftp://example.com/'] }, valid: false },
      { name: 'a javascript: URL is not a seed URL', schema: ZapSettingsInput, input: { seed_urls: ['javascript:alert(1)'] }, valid: false },
      { name: 'a relative path is not a seed URL', schema: ZapSettingsInput, input: { seed_urls: ['/start'] }, valid: false },
      { name: 'a scheme without a host is not a seed URL', schema: ZapSettingsInput, input: { seed_urls: ['http://'] }, valid: false },
      { name: 'a bare host name is not a seed URL', schema: ZapSettingsInput, input: { seed_urls: ['example.com'] }, valid: false },
      {
        name: 'one bad seed URL among good ones is refused',
        schema: ZapSettingsInput,
        input: { seed_urls: ['https://example.com/', 'file:///etc/passwd'] },
        valid: false,
      },
      {
        name: 'a seed URL of 2049 characters is refused',
        schema: ZapSettingsInput,
        input: { seed_urls: [`https://example.com/${'a'.repeat(2029)}`] },
        valid: false,
      },
      {
        name: '100 seed URLs are accepted',
        schema: ZapSettingsInput,
        input: { seed_urls: Array.from({ length: 100 }, (_, i) => `https://example.com/${i}`) },
        valid: true,
      },
      {
        name: '101 seed URLs are refused',
        schema: ZapSettingsInput,
        input: { seed_urls: Array.from({ length: 101 }, (_, i) => `https://example.com/${i}`) },
        valid: false,
      },
    ]);
  });

  describe('ZapSettingsInput excluded_urls', () => {
    runTable([
      {
        name: 'a valid regular expression is accepted',
        schema: ZapSettingsInput,
        input: { excluded_urls: ['.*\\.pdf$', '^https://example\\.com/logout'] },
        valid: true,
      },
      { name: 'an unclosed group is refused', schema: ZapSettingsInput, input: { excluded_urls: ['(abc'] }, valid: false },
      { name: 'an unclosed character class is refused', schema: ZapSettingsInput, input: { excluded_urls: ['[a-'] }, valid: false },
      { name: 'a dangling quantifier is refused', schema: ZapSettingsInput, input: { excluded_urls: ['*.pdf'] }, valid: false },
      { name: 'an empty expression is refused', schema: ZapSettingsInput, input: { excluded_urls: [''] }, valid: false },
      { name: 'a non-string entry is refused', schema: ZapSettingsInput, input: { excluded_urls: [42] }, valid: false },
    ]);
  });

  describe('ZapSettingsInput headers', () => {
    runTable([
      {
        name: 'a token header name with a plain value is accepted',
        schema: ZapSettingsInput,
        input: header('X-Api-Key', 'secret value; with=stuff'),
        valid: true,
      },
      { name: 'an empty header value is accepted', schema: ZapSettingsInput, input: header('X-Empty', ''), valid: true },
      { name: 'a header name with a space is refused', schema: ZapSettingsInput, input: header('Bad Header', 'x'), valid: false },
      { name: 'a header name with a colon is refused', schema: ZapSettingsInput, input: header('X-A:B', 'x'), valid: false },
      { name: 'an empty header name is refused', schema: ZapSettingsInput, input: header('', 'x'), valid: false },
      { name: 'a header name with a line break is refused', schema: ZapSettingsInput, input: header('X-A\r\nX-B', 'x'), valid: false },
      { name: 'a header value with CR LF (header injection) is refused', schema: ZapSettingsInput, input: header('X-A', 'a\r\nSet-Cookie: x=1'), valid: false },
      { name: 'a header value with a bare LF is refused', schema: ZapSettingsInput, input: header('X-A', 'a\nb'), valid: false },
      { name: 'a header value with a bare CR is refused', schema: ZapSettingsInput, input: header('X-A', 'a\rb'), valid: false },
      { name: 'a header value of 8192 characters is accepted', schema: ZapSettingsInput, input: header('X-A', 'v'.repeat(8192)), valid: true },
      { name: 'a header value of 8193 characters is refused', schema: ZapSettingsInput, input: header('X-A', 'v'.repeat(8193)), valid: false },
      { name: 'a header without a value is refused', schema: ZapSettingsInput, input: { headers: [{ key: 'X-A' }] }, valid: false },
      {
        name: '50 headers are accepted',
        schema: ZapSettingsInput,
        input: { headers: Array.from({ length: 50 }, (_, i) => ({ key: `X-${i}`, value: 'v' })) },
        valid: true,
      },
      {
        name: '51 headers are refused',
        schema: ZapSettingsInput,
        input: { headers: Array.from({ length: 51 }, (_, i) => ({ key: `X-${i}`, value: 'v' })) },
        valid: false,
      },
      { name: 'ZapHeader alone refuses a CR LF value too', schema: ZapHeader, input: { key: 'X-A', value: 'a\r\n' }, valid: false },
    ]);
  });

  describe('ZapSettingsInput cookies', () => {
    runTable([
      { name: 'a cookie with only name and value is accepted', schema: ZapSettingsInput, input: { cookies: [cookie({})] }, valid: true },
      {
        name: 'a cookie with every field is accepted',
        schema: ZapSettingsInput,
        input: { cookies: [cookie({ domain: 'example.com', path: '/', expiry: 1_800_000_000, httpOnly: true, secure: true, sameSite: 'Strict' })] },
        valid: true,
      },
      { name: 'sameSite Lax is accepted', schema: ZapCookie, input: cookie({ sameSite: 'Lax' }), valid: true },
      { name: 'sameSite None is accepted', schema: ZapCookie, input: cookie({ sameSite: 'None' }), valid: true },
      { name: 'sameSite in lower case is refused', schema: ZapCookie, input: cookie({ sameSite: 'lax' }), valid: false },
      { name: 'an unknown sameSite value is refused', schema: ZapCookie, input: cookie({ sameSite: 'Loose' }), valid: false },
      { name: 'an expiry of 0 is accepted', schema: ZapCookie, input: cookie({ expiry: 0 }), valid: true },
      { name: 'a fractional expiry is refused', schema: ZapCookie, input: cookie({ expiry: 1.5 }), valid: false },
      { name: 'a negative expiry is refused', schema: ZapCookie, input: cookie({ expiry: -1 }), valid: false },
      { name: 'an expiry sent as a string is refused', schema: ZapCookie, input: cookie({ expiry: '1800000000' }), valid: false },
      { name: 'a cookie without a name is refused', schema: ZapCookie, input: { value: 'abc' }, valid: false },
      { name: 'a cookie with an empty name is refused', schema: ZapCookie, input: cookie({ name: '' }), valid: false },
      { name: 'a cookie without a value is refused', schema: ZapCookie, input: { name: 'session' }, valid: false },
      { name: 'httpOnly sent as a string is refused', schema: ZapCookie, input: cookie({ httpOnly: 'true' }), valid: false },
      // Cookies reach the same wire as headers (the Cookie header of every scan request).
      { name: 'a cookie value with CR LF is refused, as header values are', schema: ZapCookie, input: cookie({ value: 'abc\r\nX-Injected: 1' }), valid: false },
      { name: 'a cookie name with CR LF is refused, as header names are', schema: ZapCookie, input: cookie({ name: 'sid\r\nX-Injected: 1' }), valid: false },
    ]);
  });

  describe('ZapSettingsInput as a whole', () => {
    runTable([
      { name: 'an empty object is accepted (nothing is changed)', schema: ZapSettingsInput, input: {}, valid: true },
      { name: 'a crawl boolean sent as a string is refused', schema: ZapSettingsInput, input: { scan_discovered_subdomains: 'yes' }, valid: false },
      { name: 'an empty included domain is refused', schema: ZapSettingsInput, input: { included_domains: [''] }, valid: false },
      { name: 'an empty anti-CSRF token name is refused', schema: ZapSettingsInput, input: { anti_csrf_tokens: [''] }, valid: false },
    ]);
  });

  describe('TargetCreate', () => {
    runTable([
      { name: 'a target alone is accepted', schema: TargetCreate, input: { target: 'example.com' }, valid: true },
      { name: 'a missing target is refused', schema: TargetCreate, input: { label: 'x' }, valid: false },
      { name: 'an empty target is refused', schema: TargetCreate, input: { target: '' }, valid: false },
      { name: 'a target of 2048 characters is accepted by the schema', schema: TargetCreate, input: { target: 'a'.repeat(2048) }, valid: true },
      { name: 'a target of 2049 characters is refused', schema: TargetCreate, input: { target: 'a'.repeat(2049) }, valid: false },
      { name: 'a label of 255 characters is accepted', schema: TargetCreate, input: { target: 'example.com', label: 'l'.repeat(255) }, valid: true },
      { name: 'a label of 256 characters is refused', schema: TargetCreate, input: { target: 'example.com', label: 'l'.repeat(256) }, valid: false },
      {
        name: '10 tags are accepted',
        schema: TargetCreate,
        input: { target: 'example.com', tags: Array.from({ length: 10 }, (_, i) => `t${i}`) },
        valid: true,
      },
      {
        name: '11 tags are refused',
        schema: TargetCreate,
        input: { target: 'example.com', tags: Array.from({ length: 11 }, (_, i) => `t${i}`) },
        valid: false,
      },
      { name: 'a tag of 255 characters is accepted', schema: TargetCreate, input: { target: 'example.com', tags: ['t'.repeat(255)] }, valid: true },
      { name: 'a tag of 256 characters is refused', schema: TargetCreate, input: { target: 'example.com', tags: ['t'.repeat(256)] }, valid: false },
      { name: 'an empty tag is refused', schema: TargetCreate, input: { target: 'example.com', tags: [''] }, valid: false },
      {
        name: 'scanner settings with a bad seed URL are refused',
        schema: TargetCreate,
        input: { target: 'example.com', scanner_settings: { zap: { seed_urls: ['ftp://x'] } } },
        valid: false,
      },
    ]);

    it('ignores undocumented fields (SPEC.md general rule 1)', () => {
      expect(TargetCreate.parse({ target: 'example.com', owner: 'me', scanner_settings: { zap: {}, nessus: {} } })).to.deep.equal({
        target: 'example.com',
        scanner_settings: { zap: {} },
      });
    });
  });

  describe('TargetUpdate', () => {
    runTable([
      { name: 'an empty body is accepted (every field keeps its value)', schema: TargetUpdate, input: {}, valid: true },
      { name: 'an empty tags array is accepted (it removes all tags)', schema: TargetUpdate, input: { tags: [] }, valid: true },
      { name: 'a label of 256 characters is refused', schema: TargetUpdate, input: { label: 'l'.repeat(256) }, valid: false },
      { name: '11 tags are refused', schema: TargetUpdate, input: { tags: Array.from({ length: 11 }, (_, i) => `t${i}`) }, valid: false },
      {
        name: 'scanner settings with a CR LF header value are refused',
        schema: TargetUpdate,
        input: { scanner_settings: { zap: header('X-A', 'a\r\nb') } },
        valid: false,
      },
    ]);

    it('does not take a new target address (SPEC.md Targets rule 1)', () => {
      expect(TargetUpdate.parse({ target: '8.8.8.8', label: 'x' })).to.deep.equal({ label: 'x' });
    });
  });
});
