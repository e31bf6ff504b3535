import dns, { type LookupAddress, type LookupAllOptions } from 'node:dns';
import type { LookupFunction } from 'node:net';
import { isPrivateAddress } from './url-policy.js';

/** dns.lookup's shape, all addresses at once: what a test replaces to make a name resolve anywhere. */
export type ResolveAll = (
  hostname: string,
  options: LookupAllOptions,
  callback: (err: NodeJS.ErrnoException | null, addresses: LookupAddress[]) => void,
) => void;

const systemResolve: ResolveAll = (hostname, options, callback) => dns.lookup(hostname, options, callback);

/**
 * The lookup the webhook sockets connect through. checkWebhookUrl resolved the name once, but a
 * name can answer differently a moment later (DNS rebinding): here the addresses the socket will
 * actually use are checked, and a private or loopback one fails the connection (unless the
 * operator allows private targets).
 */
export function guardedLookup(allowPrivate: boolean, resolve: ResolveAll = systemResolve): LookupFunction {
  return (hostname, options, callback) => {
    resolve(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) return callback(err, '', 0);
      const refused = allowPrivate ? undefined : addresses.find((a) => isPrivateAddress(a.address));
      if (refused || addresses.length === 0) {
        const why = refused
          ? `${hostname} resolves to ${refused.address}, a loopback or private address`
          : `${hostname} has no address`;
        const error: NodeJS.ErrnoException = Object.assign(new Error(`webhook refused: ${why}`), {
          code: 'EWEBHOOKPRIVATE',
        });
        return callback(error, '', 0);
      }
      if (options.all) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, addresses);
      const [first] = addresses as [LookupAddress];
      callback(null, first.address, first.family);
    });
  };
}

/**
 * The fetch webhook deliveries go through: unless private targets are allowed, every connection
 * is made to an address the policy accepts at connect time. Idle sockets close after a few
 * seconds, so a quiet server keeps none open.
 */
export function createWebhookFetch(allowPrivate: boolean, resolve?: ResolveAll): typeof fetch {
  const lookup = guardedLookup(allowPrivate, resolve);
  // undici is loaded on the first delivery, not by every command that makes a context
  let made: Promise<(input: unknown, init?: RequestInit) => Promise<unknown>> | undefined;
  const guarded = () =>
    (made ??= import('undici').then(({ Agent, fetch: undiciFetch }) => {
      const dispatcher = new Agent({ connect: { lookup }, keepAliveTimeout: 4000, keepAliveMaxTimeout: 4000 });
      return (input: unknown, init?: RequestInit) =>
        undiciFetch(input as never, { ...(init as object), dispatcher } as never);
    }));
  return (async (input: Parameters<typeof fetch>[0], init?: RequestInit) =>
    (await guarded())(input, init)) as typeof fetch;
}
