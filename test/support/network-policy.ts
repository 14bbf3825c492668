/**
 * What a NetworkPolicy's egress rules admit for one address outside the
 * cluster's pods: a rule with no `to` admits every address, an ipBlock peer
 * its CIDR less its exceptions; namespace and pod selectors match pods only,
 * never an address such as cloud metadata.
 */
import { BlockList, isIPv6 } from 'node:net';

interface IpBlock {
  cidr: string;
  except?: string[];
}
interface EgressRule {
  to?: Array<{ ipBlock?: IpBlock; namespaceSelector?: unknown; podSelector?: unknown }>;
  ports?: Array<{ port?: number | string; protocol?: string }>;
}

function inCidr(address: string, cidr: string): boolean {
  const [network, prefix] = cidr.split('/');
  const family = isIPv6(network!) ? 'ipv6' : 'ipv4';
  if ((family === 'ipv6') !== isIPv6(address)) return false;
  const list = new BlockList();
  list.addSubnet(network!, Number(prefix), family);
  return list.check(address, family);
}

function blockAdmits(block: IpBlock, address: string): boolean {
  return inCidr(address, block.cidr) && !(block.except ?? []).some((cidr) => inCidr(address, cidr));
}

/** The egress rules that admit a connection to the address (on some port), empty when none does. */
export function egressRulesAdmitting(policy: { kind: string; spec?: { egress?: EgressRule[] } }, address: string): EgressRule[] {
  return (policy.spec?.egress ?? []).filter(
    (rule) => rule.to === undefined || rule.to.length === 0 || rule.to.some((peer) => peer.ipBlock !== undefined && blockAdmits(peer.ipBlock, address)),
  );
}
