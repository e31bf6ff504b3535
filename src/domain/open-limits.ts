import { isIPv4, isIPv6 } from 'node:net';
import type { Context } from '../context.js';
import { DrmError } from '../errors.js';
import { countInWindow, type RateState } from './rate-limits.js';

/** The endpoints anyone may call without a key, each limited per client address. */
export type OpenEndpoint = 'register' | 'nonce';

const WHAT: Record<OpenEndpoint, string> = { register: 'registrations', nonce: 'sign-in nonces' };

/**
 * Counts a request to an open endpoint against its client's hourly window (--register-limit,
 * --nonce-limit). Counters live in the database like the keyed limits, so several servers share
 * them. A request without a client address (none reaches a real server that way; only in-process
 * calls) is not counted.
 */
export async function countOpenRequest(
  ctx: Context,
  endpoint: OpenEndpoint,
  ip: string | null,
): Promise<RateState | null> {
  if (ip === null) return null;
  const limit = endpoint === 'register' ? ctx.config.registerLimitPerHour : ctx.config.nonceLimitPerHour;
  return countInWindow(ctx, `ip-${endpoint}:${clientBucket(ip)}`, limit, `${WHAT[endpoint]} from one address`);
}

/**
 * Whose budget a client address spends. One IPv6 host is normally handed a whole /64 (2^64
 * addresses to rotate through), so IPv6 clients are counted per /64, written
 * `2001:db8:0:1::/64`; an IPv4 address (also when IPv4-mapped) as itself. Anything else (a
 * forged X-Forwarded-For behind --trust-proxy) counts as its own text, cut to 64 characters.
 */
export function clientBucket(ip: string): string {
  const bare = ip.trim().toLowerCase().replace(/%.*$/, '');
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(bare)?.[1];
  if (mapped && isIPv4(mapped)) return mapped;
  if (!isIPv6(bare)) return bare.slice(0, 64);
  return `${ipv6Groups(bare).slice(0, 4).join(':')}::/64`;
}

/** The eight groups of a valid IPv6 address, without leading zeros ('::' expanded). */
function ipv6Groups(ip: string): string[] {
  // A trailing dotted IPv4 part stands for the last two groups; only the first four matter here.
  const groups = (part: string) =>
    part === '' ? [] : part.split(':').flatMap((g) => (g.includes('.') ? ['0', '0'] : [parseInt(g, 16).toString(16)]));
  const gap = ip.indexOf('::');
  if (gap < 0) return groups(ip);
  const head = groups(ip.slice(0, gap));
  const tail = groups(ip.slice(gap + 2));
  return [...head, ...Array<string>(8 - head.length - tail.length).fill('0'), ...tail];
}

/**
 * Stores a new sign-in nonce unless as many unexpired, unused ones are outstanding as the
 * deployment allows (each lives 10 minutes): an open endpoint must not grow a table without
 * bound. Expired ones are swept first, so only a real flood is refused. Counting and storing hold
 * one lock, so requests arriving together cannot all slip under the bound.
 */
export async function addNonceWithinBound(ctx: Context, nonce: string, expiresAt: number): Promise<void> {
  const max = ctx.config.maxOutstandingNonces;
  const stored = await ctx.db.transaction(async (tx) => {
    const now = ctx.clock.now();
    await tx.repos.admins.lockNonces();
    if ((await tx.repos.admins.countOutstandingNonces(now)) >= max) {
      await tx.repos.admins.pruneNonces(now);
      if ((await tx.repos.admins.countOutstandingNonces(now)) >= max) return false;
    }
    await tx.repos.admins.addNonce(nonce, expiresAt);
    return true;
  });
  if (!stored) {
    throw new DrmError(
      'RATE_LIMIT_EXCEEDED',
      `too many sign-ins in progress (${max} nonces outstanding); try again in a minute`,
      {
        headers: { 'Retry-After': '60' },
      },
    );
  }
}
