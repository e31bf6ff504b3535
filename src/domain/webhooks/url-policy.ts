import { lookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';
import { badRequest } from '../../errors.js';

// Addresses a webhook must not reach unless the operator allows it: a webhook URL is chosen by
// a customer, and the server would otherwise POST into the operator's own network.
const blocked = new BlockList();
for (const [net, bits] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const) {
  blocked.addSubnet(net, bits, 'ipv4');
}
for (const [net, bits] of [
  // ::/96 holds :: and ::1 and the deprecated IPv4-compatible addresses (::127.0.0.1 is written
  // ::7f00:1 by the URL parser, so the mapped-address rule below does not see it); none is a
  // legitimate public target.
  ['::', 96],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
] as const) {
  blocked.addSubnet(net, bits, 'ipv6');
}

export function isPrivateAddress(address: string): boolean {
  const bare = address.replace(/^\[|\]$/g, '');
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(bare);
  if (mapped?.[1]) return blocked.check(mapped[1], 'ipv4');
  const family = isIP(bare);
  if (family === 4) return blocked.check(bare, 'ipv4');
  if (family === 6) return blocked.check(bare, 'ipv6');
  return false;
}

const LOCAL_NAMES = /(^|\.)(localhost|local|internal|localdomain)$/i;

/**
 * Accepts only http(s) URLs; unless private targets are allowed, refuses loopback, private and
 * link-local addresses, local names, and names that resolve to such addresses. A name that does
 * not resolve now is accepted (it is checked again before each delivery).
 */
export async function checkWebhookUrl(raw: string, allowPrivate: boolean): Promise<URL> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw badRequest('webhookUrl must be an http or https URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw badRequest('webhookUrl must be an http or https URL');
  if (url.username || url.password) throw badRequest('webhookUrl must not carry credentials');
  if (allowPrivate) return url;
  // A fully qualified name may end in dots ("localhost." is localhost to the resolver), so the
  // name rules look at it without them.
  const host = url.hostname.replace(/^\[|\]$/g, '').replace(/\.+$/, '');
  if (isIP(host) ? isPrivateAddress(host) : LOCAL_NAMES.test(host) || (await resolvesPrivate(host))) {
    throw badRequest(
      'webhookUrl points to a loopback or private address; the server refuses those ' +
        'unless started with --allow-private-webhooks',
    );
  }
  return url;
}

async function resolvesPrivate(host: string): Promise<boolean> {
  try {
    const addresses = await lookup(host, { all: true, verbatim: true });
    return addresses.some((a) => isPrivateAddress(a.address));
  } catch {
    return false;
  }
}
