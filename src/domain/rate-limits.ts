import type { Context } from '../context.js';
import { HOUR_MS } from '../clock.js';
import { DrmError } from '../errors.js';
import type { KeyAuth } from './auth.js';
import { DEFAULT_LIMITS, planFor } from './plans.js';

export interface RateState {
  limit: number;
  remaining: number;
  /** epoch seconds at which the window resets */
  reset: number;
}

export const hourlyLimitOf = (auth: KeyAuth): number =>
  auth.org.rateLimitPerHour ?? DEFAULT_LIMITS[planFor(auth.org.plan).name].perHour;

export const monthlyStreamLimitOf = (auth: Pick<KeyAuth, 'org'>): number =>
  auth.org.monthlyStreamLimit ?? DEFAULT_LIMITS[planFor(auth.org.plan).name].monthlyStreams;

export function rateHeaders(s: RateState): Record<string, string> {
  return {
    'X-RateLimit-Limit': String(s.limit),
    'X-RateLimit-Remaining': String(s.remaining),
    'X-RateLimit-Reset': String(s.reset),
  };
}

/**
 * Counts one keyed request in the fixed clock-hour window of its organization and, where the
 * key has its own limit, of its key. The state reported is the tighter of the two. Over the
 * limit gives RATE_LIMIT_EXCEEDED with the headers and Retry-After.
 */
export async function countRequest(ctx: Context, auth: KeyAuth): Promise<RateState> {
  const now = ctx.clock.now();
  const windowStart = Math.floor(now / HOUR_MS) * HOUR_MS;
  const reset = (windowStart + HOUR_MS) / 1000;
  const limits = new Map<string, number>([[`org:${auth.org.id}`, hourlyLimitOf(auth)]]);
  if (auth.key.rateLimitPerHour !== null) limits.set(`key:${auth.key.id}`, auth.key.rateLimitPerHour);
  const counts = await ctx.repos.rateCounters.hit([...limits.keys()], windowStart);

  let tightest: RateState | undefined;
  let exceeded = false;
  for (const [bucket, limit] of limits) {
    const used = counts.get(bucket) ?? 1;
    const state = { limit, remaining: Math.max(0, limit - used), reset };
    if (used > limit) exceeded = true;
    if (!tightest || state.remaining < tightest.remaining) tightest = state;
  }
  const state = tightest as RateState;
  if (exceeded) {
    throw new DrmError('RATE_LIMIT_EXCEEDED', `rate limit of ${state.limit} requests per hour exceeded`, {
      headers: { ...rateHeaders(state), 'Retry-After': String(Math.max(1, Math.ceil(reset - now / 1000))) },
    });
  }
  return state;
}
