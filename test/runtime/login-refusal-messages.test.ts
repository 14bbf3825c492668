/**
 * What the login proxy's refusals say (issue 26): the tenant reads the host
 * and the rule in the login's failure, never the address an internal name
 * resolved to; the address is kept for the service's log.
 */
import { expect } from 'chai';
import { ConfiningProxy } from '../../src/runtime/login-replay/confining-proxy.js';
import { parseCidrList } from '../../src/domain/targets/ipv4.js';

const dns = (table: Record<string, string[]>) => ({ resolve4: async (host: string) => table[host] ?? [] });

describe('login proxy refusals', () => {
  it('name the rule but not the private address a name resolves to, and keep the address for the log', async () => {
    const proxy = new ConfiningProxy([], dns({ 'intranet.example.com': ['93.184.216.34', '10.1.2.3'] }));
    const vetted = await proxy.vet('intranet.example.com');
    expect(vetted).to.deep.equal({ refused: 'it resolves to an address in the 10.0.0.0/8 private-use (RFC 1918) range' });
    expect(JSON.stringify(vetted)).not.to.include('10.1.2.3');
    expect(proxy.refusals).to.deep.equal([
      { host: 'intranet.example.com', reason: 'it resolves to an address in the 10.0.0.0/8 private-use (RFC 1918) range', address: '10.1.2.3' },
    ]);
  });

  it('say "it is in" for an address literal, which is the host the recording named', async () => {
    const proxy = new ConfiningProxy([], dns({}));
    expect(await proxy.vet('169.254.169.254')).to.deep.equal({ refused: 'it is in the 169.254.0.0/16 link-local (RFC 3927) range' });
    expect(proxy.refusals[0]).to.deep.equal({ host: '169.254.169.254', reason: 'it is in the 169.254.0.0/16 link-local (RFC 3927) range' });
  });

  it('let an allowed range through', async () => {
    const proxy = new ConfiningProxy(parseCidrList('10.0.0.0/8'), dns({ 'intranet.example.com': ['10.1.2.3'] }));
    expect(await proxy.vet('intranet.example.com')).to.deep.equal({ address: '10.1.2.3' });
  });
});
