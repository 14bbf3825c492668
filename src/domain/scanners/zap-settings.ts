/**
 * A target's ZAP settings (SPEC.md, Targets: scanner_settings.zap): the
 * domain owns their shape and rules; the API's wire schemas (src/api/schemas/
 * targets.ts) re-export these, so the OpenAPI document and the scanner read
 * the same definition.
 */
import { z } from 'zod';
import { MAX_TARGET_LENGTH } from '../targets/target-address.js';

/** The same bound as the API's tag length. */
const MAX_TAG_LENGTH = 255;
const MAX_LIST = 100;

const httpUrl = z
  .string()
  .max(MAX_TARGET_LENGTH)
  .refine((value) => /^https?:\/\//i.test(value) && URL.canParse(value), 'must be an http:// or https:// URL');

const regex = z
  .string()
  .min(1)
  .max(MAX_TARGET_LENGTH)
  .refine((value) => {
    try {
      new RegExp(value);
      return true;
    } catch {
      return false;
    }
  }, 'must be a valid regular expression');

const domainName = z.string().min(1).max(MAX_TAG_LENGTH);

const HTTP_TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

export const ZapHeader = z
  .object({
    key: z.string().min(1).max(256).regex(HTTP_TOKEN).meta({ description: 'HTTP header name.' }),
    value: z
      .string()
      .max(8192)
      .regex(/^[^\r\n\x00]*$/)
      .meta({ description: 'Header value; no line breaks.' }),
  })
  .meta({ id: 'ZapHeader' });

export const SAME_SITE_VALUES = ['Strict', 'Lax', 'None'] as const;

/** Cookie text ends up in HTTP headers: no control characters and no ';' (which would start another attribute). */
const COOKIE_TEXT = /^[^\x00-\x1f\x7f;]*$/;

export const ZapCookie = z
  .object({
    name: z.string().regex(HTTP_TOKEN).max(4096).meta({ description: 'Cookie name: an HTTP token.' }),
    value: z.string().max(4096).regex(COOKIE_TEXT).meta({ description: 'Cookie value; no control characters or semicolons.' }),
    domain: z.string().max(MAX_TAG_LENGTH).regex(COOKIE_TEXT).optional(),
    path: z.string().max(MAX_TARGET_LENGTH).regex(COOKIE_TEXT).optional(),
    expiry: z.number().int().min(0).optional().meta({ description: 'Expiry as seconds since the Unix epoch (the WebDriver cookie convention).' }),
    httpOnly: z.boolean().optional(),
    secure: z.boolean().optional(),
    sameSite: z.enum(SAME_SITE_VALUES).optional().meta({ description: 'Strict, Lax or None, as in the Set-Cookie attribute.' }),
  })
  .meta({ id: 'ZapCookie', description: 'A cookie sent with every request of the web scan. name and value are required.' });

const zapFields = {
  included_domains: z.array(domainName).max(MAX_LIST).meta({
    description:
      'Domains the crawler may visit besides the target host. Each obeys the target rules: a public IPv4 address or public domain name, or one inside VIGIL_ALLOW_TARGETS (400 otherwise).',
  }),
  excluded_domains: z.array(domainName).max(MAX_LIST).meta({ description: 'Domains the crawler never visits.' }),
  excluded_urls: z
    .array(regex)
    .max(MAX_LIST)
    .meta({ description: 'Regular expressions; URLs matching any of them are neither crawled nor attacked (ZAP exclude list).' }),
  seed_urls: z
    .array(httpUrl)
    .max(MAX_LIST)
    .meta({ description: 'http(s) URLs where crawling starts in addition to the target URL. Their hosts obey the target rules, as included_domains do.' }),
  anti_csrf_tokens: z.array(z.string().min(1).max(MAX_TAG_LENGTH)).max(MAX_LIST).meta({ description: 'Names of form fields that carry anti-CSRF tokens.' }),
  scan_discovered_subdomains: z.boolean(),
  scan_third_party_javascript: z.boolean(),
  headers: z.array(ZapHeader).max(50),
  cookies: z.array(ZapCookie).max(50),
};

export const ZapSettings = z.object(zapFields).meta({ id: 'ZapSettings' });
export const ZapSettingsInput = z.object(zapFields).partial().meta({ id: 'ZapSettingsInput' });

export type ZapSettingsValue = z.infer<typeof ZapSettings>;
export type ZapSettingsInputValue = z.infer<typeof ZapSettingsInput>;
