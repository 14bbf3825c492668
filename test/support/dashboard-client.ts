/**
 * A cookie-keeping HTTP client for the dashboard, as a browser would drive
 * it: form posts with the page's CSRF token and the page's Origin, redirects
 * not followed so that tests see them. Also a scanner-file builder, so that
 * tests have risks to look at (and hostile text inside them).
 */
import { TestService } from './test-service.js';

export interface DashboardResponse {
  status: number;
  headers: Headers;
  text: string;
  location: string | null;
  /** The Set-Cookie lines of this response. */
  setCookies: string[];
}

export interface PostOptions {
  /** The CSRF field: the last page's token by default; null leaves it out. */
  csrf?: string | null;
  /** The Origin header: the service's own by default; null leaves it out. */
  origin?: string | null;
}

export class DashboardClient {
  readonly cookies = new Map<string, string>();
  /** The CSRF token of the last page read. */
  csrf: string | undefined;

  constructor(readonly baseUrl: string) {}

  async get(path: string): Promise<DashboardResponse> {
    return this.send('GET', path, undefined, {});
  }

  async post(path: string, fields: Record<string, string> = {}, options: PostOptions = {}): Promise<DashboardResponse> {
    const csrf = options.csrf === undefined ? this.csrf : options.csrf;
    const body = new URLSearchParams(csrf === null || csrf === undefined ? fields : { ...fields, csrf });
    const origin = options.origin === undefined ? this.baseUrl : options.origin;
    const headers: Record<string, string> = { 'Content-Type': 'application/x-www-form-urlencoded' };
    if (origin !== null) headers.Origin = origin;
    return this.send('POST', path, body.toString(), headers);
  }

  /** Opens the sign-in form (for its token) and sends the key. */
  async signIn(apiKey: string): Promise<DashboardResponse> {
    await this.get('/dashboard/sign-in');
    return this.post('/dashboard/sign-in', { api_key: apiKey });
  }

  /** Signs in and fails the test unless a session started. */
  async signedIn(apiKey: string): Promise<this> {
    const response = await this.signIn(apiKey);
    if (response.status !== 303 || !this.cookies.has('vigil_session')) throw new Error(`sign-in failed with ${response.status}: ${response.text}`);
    await this.get('/dashboard/keys');
    return this;
  }

  private async send(method: string, path: string, body: string | undefined, headers: Record<string, string>): Promise<DashboardResponse> {
    const cookie = [...this.cookies].map(([name, value]) => `${name}=${value}`).join('; ');
    const response = await fetch(new URL(path, this.baseUrl), {
      method,
      body,
      redirect: 'manual',
      headers: cookie === '' ? headers : { ...headers, Cookie: cookie },
    });
    const text = await response.text();
    const setCookies = response.headers.getSetCookie();
    for (const line of setCookies) this.keep(line);
    const token = /name="csrf" value="([^"]*)"/.exec(text)?.[1];
    if (token !== undefined) this.csrf = token;
    return { status: response.status, headers: response.headers, text, location: response.headers.get('location'), setCookies };
  }

  private keep(line: string): void {
    const [pair = ''] = line.split(';');
    const separator = pair.indexOf('=');
    const name = pair.slice(0, separator);
    const value = pair.slice(separator + 1);
    if (/max-age=0/i.test(line) || value === '') this.cookies.delete(name);
    else this.cookies.set(name, value);
  }
}

export interface ReportPort {
  port: number;
  /** nmap's service product string: scanner text that ends up in risk titles. */
  product?: string;
  /** vulners entries on the port, each one risk whose threat level follows its CVSS score. */
  cves?: Array<{ id: string; cvss: string }>;
}

const xmlEscape = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

function portXml(port: ReportPort): string {
  const service = `<service name="http" product="${xmlEscape(port.product ?? 'nginx')}" method="probed" conf="10"/>`;
  const cves = port.cves ?? [];
  const script =
    cves.length === 0
      ? ''
      : `<script id="vulners" output="vulners"><table key="cpe:/a:example:server:1.0">${cves
          .map(
            (cve) =>
              `<table><elem key="cvss">${cve.cvss}</elem><elem key="id">${cve.id}</elem><elem key="is_exploit">false</elem><elem key="type">cve</elem></table>`,
          )
          .join('')}</table></script>`;
  return `<port protocol="tcp" portid="${port.port}"><state state="open" reason="syn-ack"/>${service}${script}</port>`;
}

/** An nmap XML report of one host with the given open ports. */
export function nmapReport(address: string, ports: readonly ReportPort[]): string {
  return `<?xml version="1.0"?>
<nmaprun scanner="nmap" args="nmap -sV ${address}" start="1763700000" version="7.94" xmloutputversion="1.05">
<host starttime="1763700000" endtime="1763700100"><status state="up" reason="syn-ack"/>
<address addr="${address}" addrtype="ipv4"/>
<ports>${ports.map(portXml).join('\n')}</ports>
</host>
<runstats><finished time="1763700100"/><hosts up="1" down="0" total="1"/></runstats>
</nmaprun>
`;
}

/** Uploads an nmap report into a new IMPORTED source of the key's account; returns the import's summary. */
export async function importNmapReport(service: TestService, apiKey: string, report: string): Promise<{ scan_id: string }> {
  const source = await service.post('/v1/sources', { source_type: 'IMPORTED', name: 'dashboard test results' }, { key: apiKey });
  if (source.status !== 200) throw new Error(`creating a source failed: ${source.text}`);
  const form = new FormData();
  form.append('source_id', source.body.data.id);
  form.append('scan_type', 'NMAP');
  form.append('file', new Blob([report]), 'nmap.xml');
  const upload = await service.request('POST', '/v1/results', { key: apiKey, formData: form });
  if (upload.status !== 200) throw new Error(`uploading the report failed: ${upload.text}`);
  return upload.body.data;
}
