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
export async function countOpenRequest(ctx: Context, endpoint: OpenEndpoint, ip: string | null): Promise<RateState | null> {
  if (ip === null) return null;
  const limit = endpoint === 'register' ? ctx.config.registerLimitPerHour : ctx.config.nonceLimitPerHour;
  return countInWindow(ctx, `ip-${endpoint}:${ip.slice(0, 64)}`, limit, `${WHAT[endpoint]} from one address`);
}

/**
 * Refuses a new sign-in nonce while as many unexpired, unused ones are outstanding as the
 * deployment allows (each lives 10 minutes): an open endpoint must not grow a table without
 * bound. Expired ones are swept first, so only a real flood is refused.
 */
export async function ensureNonceRoom(ctx: Context): Promise<void> {
  const now = ctx.clock.now();
  const max = ctx.config.maxOutstandingNonces;
  if ((await ctx.repos.admins.countOutstandingNonces(now)) < max) return;
  await ctx.repos.admins.pruneNonces(now);
  if ((await ctx.repos.admins.countOutstandingNonces(now)) < max) return;
  throw new DrmError('RATE_LIMIT_EXCEEDED', `too many sign-ins in progress (${max} nonces outstanding); try again in a minute`, {
    headers: { 'Retry-After': '60' },
  });
}
